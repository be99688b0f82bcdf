package boot

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PMI is a client of PMI-1's wire protocol: one line per command,
// "cmd=NAME key=value ...\n", on the socket the launcher passed in PMI_FD.
// Values travel base64url-encoded (no '=', no spaces) and split into pieces
// of the launcher's vallen_max.
type PMI struct {
	conn   net.Conn
	rd     *bufio.Reader
	rank   int
	size   int
	kvs    string
	keyMax int    // keylen_max
	valMax int    // vallen_max
	via    string // the launcher, for Launcher: "slurm srun, job 12.0", "mpich hydra"
	mu     sync.Mutex
	broken bool
}

// initTimeout bounds the handshake with the launcher's PMI server.
const initTimeout = 30 * time.Second

// DialPMI speaks PMI-1 on the inherited file descriptor fd (PMI_FD), as
// rank (PMI_RANK) of size (PMI_SIZE).
func DialPMI(fd, rank, size string) (*PMI, error) {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 0 {
		return nil, &OpError{"init", fmt.Errorf("PMI_FD %q is not a file descriptor", fd)}
	}
	f := os.NewFile(uintptr(n), "PMI_FD")
	if f == nil {
		return nil, &OpError{"init", fmt.Errorf("PMI_FD %d is not open", n)}
	}
	c, err := net.FileConn(f)
	f.Close() // FileConn dup'ed it
	if err != nil {
		return nil, &OpError{"init", fmt.Errorf("PMI_FD %d is not a socket: %w", n, err)}
	}
	p, err := NewPMI(c, rank, size)
	if err != nil {
		c.Close()
		return nil, err
	}
	p.via = launcherName(os.Getenv)
	return p, nil
}

// launcherName tells which launcher started the rank, from the variables it
// sets besides PMI_FD or PMIX_NAMESPACE: Slurm's srun (SLURM_JOB_ID,
// SLURM_STEP_ID), MPICH's hydra (MPI_LOCALNRANKS), Open MPI's mpirun
// (OMPI_COMM_WORLD_SIZE); "" if none.
func launcherName(getenv func(string) string) string {
	if j := getenv("SLURM_JOB_ID"); j != "" {
		if s := getenv("SLURM_STEP_ID"); s != "" {
			j += "." + s
		}
		return "slurm srun, job " + j
	}
	if getenv("MPI_LOCALNRANKS") != "" {
		return "mpich hydra"
	}
	if getenv("OMPI_COMM_WORLD_SIZE") != "" {
		return "open mpi mpirun"
	}
	return ""
}

// NewPMI runs the PMI-1 handshake (init, maxes, kvs name) on c.
func NewPMI(c net.Conn, rank, size string) (*PMI, error) {
	p := &PMI{conn: c, rd: bufio.NewReader(c)}
	var err error
	if p.rank, err = strconv.Atoi(rank); err != nil {
		return nil, &OpError{"init", fmt.Errorf("PMI_RANK %q is not a number", rank)}
	}
	if p.size, err = strconv.Atoi(size); err != nil || p.size < 1 || p.rank < 0 || p.rank >= p.size {
		return nil, &OpError{"init", fmt.Errorf("PMI_SIZE %q / PMI_RANK %q: want 0 <= rank < size", size, rank)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	r, err := p.do(ctx, "init", "cmd=init pmi_version=1 pmi_subversion=1", "response_to_init")
	if err != nil {
		return nil, err
	}
	if r["pmi_version"] != "1" {
		return nil, &OpError{"init", fmt.Errorf("launcher speaks PMI version %q, not 1", r["pmi_version"])}
	}
	if r, err = p.do(ctx, "get_maxes", "cmd=get_maxes", "maxes"); err != nil {
		return nil, err
	}
	p.keyMax, _ = strconv.Atoi(r["keylen_max"])
	p.valMax, _ = strconv.Atoi(r["vallen_max"])
	if p.keyMax < 16 || p.valMax < 16 {
		return nil, &OpError{"get_maxes", fmt.Errorf("keylen_max %q, vallen_max %q: too small (want >= 16)", r["keylen_max"], r["vallen_max"])}
	}
	if r, err = p.do(ctx, "get_my_kvsname", "cmd=get_my_kvsname", "my_kvsname"); err != nil {
		return nil, err
	}
	if p.kvs = r["kvsname"]; p.kvs == "" {
		return nil, &OpError{"get_my_kvsname", errors.New("no kvsname in the answer")}
	}
	return p, nil
}

func (p *PMI) Rank() int { return p.rank }
func (p *PMI) Size() int { return p.size }

// Launcher is "pmi-1 (PMI_FD)", with the launcher's name when known:
// "pmi-1 (PMI_FD; slurm srun, job 12.0)".
func (p *PMI) Launcher() string {
	if p.via == "" {
		return "pmi-1 (PMI_FD)"
	}
	return "pmi-1 (PMI_FD; " + p.via + ")"
}

// Close sends finalize (unless the client is broken) and closes the socket.
func (p *PMI) Close() error {
	if !p.isBroken() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p.do(ctx, "finalize", "cmd=finalize", "finalize_ack") //nolint:errcheck // best effort: the socket closes anyway
		cancel()
	}
	return p.conn.Close()
}

func (p *PMI) isBroken() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broken
}

// Barrier is PMI-1's barrier_in / barrier_out.
func (p *PMI) Barrier(ctx context.Context) error {
	_, err := p.do(ctx, "barrier", "cmd=barrier_in", "barrier_out")
	return err
}

// cmdLineMax bounds one command line sent to the launcher, newline
// included: PMI-1's line limit (PMIU_MAXLINE in MPICH's simple PMI). Slurm's
// mpi/pmi2 plugin reads a PMI-1 command with one read of at most 1024 bytes,
// so a longer put is cut and its rest taken for a malformed next command.
const cmdLineMax = 1024

// maxPieces bounds the pieces of one value (Allgather's get side refuses more).
const maxPieces = 1 << 20

// pieceLen is the longest value piece whose put line for a key of keyLen
// bytes stays within both vallen_max and cmdLineMax.
func (p *PMI) pieceLen(keyLen int) int {
	room := cmdLineMax - len("cmd=put kvsname= key= value=\n") - len(p.kvs) - keyLen
	return min(p.valMax-1, room)
}

// Allgather puts data under name.RANK (in pieces if it is long), runs a
// barrier, and gets every rank's value.
func (p *PMI) Allgather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	if strings.ContainsAny(name, " =\n") || len(name)+16 > p.keyMax {
		return nil, &OpError{"put", fmt.Errorf("key name %q: no spaces or '=', at most %d bytes", name, p.keyMax-16)}
	}
	enc := base64.RawURLEncoding.EncodeToString(data)
	// the longest key: name.RANK.PIECE, each number at most 7 digits (maxPieces)
	piece := p.pieceLen(len(name) + 16)
	if piece < 16 {
		return nil, &OpError{"put", fmt.Errorf("kvs name %q leaves %d bytes of a %d-byte PMI line for a value (want >= 16)", p.kvs, piece, cmdLineMax)}
	}
	if n := (len(enc) + piece - 1) / piece; n > maxPieces {
		return nil, &OpError{"put", fmt.Errorf("value of %d bytes needs %d pieces of %d (limit %d)", len(data), n, piece, maxPieces)}
	}
	var parts []string
	for len(enc) > piece {
		parts = append(parts, enc[:piece])
		enc = enc[piece:]
	}
	parts = append(parts, enc)
	base := fmt.Sprintf("%s.%d", name, p.rank)
	if err := p.put(ctx, base, strconv.Itoa(len(parts))); err != nil {
		return nil, err
	}
	for i, s := range parts {
		if err := p.put(ctx, fmt.Sprintf("%s.%d", base, i), s); err != nil {
			return nil, err
		}
	}
	if err := p.Barrier(ctx); err != nil {
		return nil, err
	}
	out := make([][]byte, p.size)
	for r := range p.size {
		base := fmt.Sprintf("%s.%d", name, r)
		v, err := p.get(ctx, base)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPieces {
			return nil, p.fail(&OpError{"get", fmt.Errorf("%s = %q: not a piece count", base, v)})
		}
		var b strings.Builder
		for i := range n {
			s, err := p.get(ctx, fmt.Sprintf("%s.%d", base, i))
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
		}
		if out[r], err = base64.RawURLEncoding.DecodeString(b.String()); err != nil {
			return nil, p.fail(&OpError{"get", fmt.Errorf("%s: %w", base, err)})
		}
	}
	return out, nil
}

func (p *PMI) put(ctx context.Context, key, val string) error {
	_, err := p.do(ctx, "put", fmt.Sprintf("cmd=put kvsname=%s key=%s value=%s", p.kvs, key, val), "put_result")
	return err
}

func (p *PMI) get(ctx context.Context, key string) (string, error) {
	r, err := p.do(ctx, "get", fmt.Sprintf("cmd=get kvsname=%s key=%s", p.kvs, key), "get_result")
	if err != nil {
		return "", err
	}
	return r["value"], nil
}

// fail marks the client broken and returns err.
func (p *PMI) fail(err error) error {
	p.mu.Lock()
	p.broken = true
	p.mu.Unlock()
	return err
}

// do sends one command line and reads the answer, which must be cmd=want
// with rc 0 (or no rc). Any failure breaks the client: a late answer would
// otherwise be taken for the next command's.
func (p *PMI) do(ctx context.Context, op, line, want string) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return nil, &OpError{op, ErrBroken}
	}
	r, err := p.roundTrip(ctx, line, want)
	if err != nil {
		p.broken = true
		return nil, &OpError{op, err}
	}
	return r, nil
}

func (p *PMI) roundTrip(ctx context.Context, line, want string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Time{}
	}
	p.conn.SetDeadline(dl) //nolint:errcheck // a conn without deadlines still gets the ctx watch below
	stop := context.AfterFunc(ctx, func() { p.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		return nil, ctxErr(ctx, err)
	}
	s, err := p.rd.ReadString('\n')
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	r, err := ParseLine(s)
	if err != nil {
		return nil, err
	}
	if r["cmd"] != want {
		return nil, fmt.Errorf("launcher answered cmd=%s, want cmd=%s", r["cmd"], want)
	}
	if rc, ok := r["rc"]; ok && rc != "0" {
		return nil, fmt.Errorf("launcher answered rc=%s (%s)", rc, r["msg"])
	}
	return r, nil
}

// ctxErr prefers ctx's reason (deadline, cancel) to the I/O error it caused.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() { // the conn deadline is ctx's
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}

// maxLine bounds one answer line of the launcher.
const maxLine = 1 << 16

// ParseLine reads one PMI-1 line: space-separated key=value fields, the
// value running to the next space. It fails on a line without cmd=, a
// field without '=', a repeated key, or a line over 64 KiB.
func ParseLine(s string) (map[string]string, error) {
	if len(s) > maxLine {
		return nil, fmt.Errorf("PMI line of %d bytes (limit %d)", len(s), maxLine)
	}
	s = strings.TrimRight(s, "\r\n")
	m := map[string]string{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("PMI line %q: field %q is not key=value", trunc(s), trunc(f))
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("PMI line %q: key %q twice", trunc(s), k)
		}
		m[k] = v
	}
	if m["cmd"] == "" {
		return nil, fmt.Errorf("PMI line %q has no cmd=", trunc(s))
	}
	return m, nil
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
