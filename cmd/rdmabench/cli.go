package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/internal/version"
)

// The command tree: one cobra command per subcommand, each with a synopsis
// (Use), a one-line Short, a description and working examples. The flags
// of a command are defined by its cmdX function on the command's own
// FlagSet (spf13/pflag, as cobra uses); cobra parses them and calls the
// action cmdX returned with the operands.

// action runs a command once its flags are parsed; args are the operands.
type action func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// cliState records how far an Execute went: started is set when a
// command's action begins, so that an error before it (an unknown command
// or flag, refused by cobra) exits as a usage error.
type cliState struct{ started bool }

// rootLong is the description of rdmabench itself.
const rootLong = `rdmabench measures RDMA verbs latency percentiles and bandwidth (SEND, WRITE,
READ, atomics) over real queue pairs, in the manner of perftest: start
'rdmabench server' on one host and 'rdmabench run HOST' on the other, or run
both ends on one device with 'rdmabench loopback'. Results print as tables
and, with --json FILE, as a JSON document that compare, plot and report read.`

// helpTemplate is cobra's default help for the commands, and for
// rdmabench itself one that lists the commands first (so that
// 'rdmabench --help | head' shows them) and ends with the exit codes.
var helpTemplate = `{{if .HasParent}}{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{else}}rdmabench: {{.Short}}

Usage: rdmabench COMMAND [flags]

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}

{{.Long | trimTrailingWhitespaces}}

Examples:
{{.Example}}

Flags:
{{flagUsages .LocalFlags | trimTrailingWhitespaces}}

Run 'rdmabench help COMMAND' (or 'rdmabench COMMAND --help') for a command's synopsis, flags and examples.

` + helpExitCodes + "{{end}}"

// subcommand is one entry of the command tree.
type subcommand struct {
	use, short, long, example string
	define                    func(fs *flag.FlagSet) action
	perftest                  bool // takes perftest's spellings of flag names (docs/perftest-flags.md)
}

// subcommands are rdmabench's commands, in the order help lists them.
func subcommands() []subcommand {
	return []subcommand{
		{use: "devices", short: "List RDMA devices, ports and GID tables",
			long:    "Lists every RDMA device with its ports (state, MTU, link layer) and GID table, and says\nwhy there is none when the host has no RDMA.",
			example: "  rdmabench devices\n  rdmabench devices --json",
			define:  cmdDevices},
		{use: "server", short: "Answer clients' tests (options come from the client)",
			long: serverLong(),
			example: "  rdmabench server\n" +
				"  rdmabench server --bind 0.0.0.0 --allow 10.0.0.0/8 --auth-key-file rdmabench.key\n" +
				"  rdmabench server -d rxe0 --max-memory 8G --max-qps 64",
			define: cmdServer, perftest: true},
		{use: "run HOST", short: "Run tests against 'rdmabench server' on HOST",
			long: "Runs the test list (every --op × --mode × --size) against the server on HOST and prints\n" +
				"perftest-style tables: latency percentiles and bandwidth. perftest's spellings work too\n" +
				"(-a, -c UC, -D 10, -F, -H, --report_gbits, --out_json: docs/perftest-flags.md).",
			example: "  rdmabench run 192.0.2.1\n" +
				"  rdmabench run 192.0.2.1 --op write --mode lat --size 2-4K -n 20000\n" +
				"  rdmabench run 192.0.2.1 --op write --mode bw -D 10 --json write-bw.json\n" +
				"  rdmabench run 192.0.2.1 --op write --mode lat -a -c UC -H",
			define: func(fs *flag.FlagSet) action { return cmdRun(fs, false) }, perftest: true},
		{use: "loopback", short: "Run both ends in this process on one device",
			long: "Runs the test list with the client and the server in this process, on one device\n" +
				"(or, with --transport tcp, the kernel TCP baseline, which needs no RDMA device).",
			example: "  rdmabench loopback -d rxe0 --op send --mode lat\n" +
				"  rdmabench loopback --op write --mode bw --size 64K --report_gbits\n" +
				"  rdmabench loopback --transport tcp --json tcp.json",
			define: func(fs *flag.FlagSet) action { return cmdRun(fs, true) }, perftest: true},
		{use: "mesh", short: "All-pairs fabric map under mpiexec or srun (latency matrix, outliers)",
			long: "Started by a launcher: mpiexec (MPICH hydra) or srun --mpi=pmi2 (Slurm).\n\n" + meshLong,
			example: "  mpiexec -n 4 -hosts h1,h2,h3,h4 rdmabench mesh --op send,write --mode lat --json mesh.json\n" +
				"  srun --mpi=pmi2 -N 8 rdmabench mesh --pattern ring --mode bw --json ring.json",
			define: cmdMesh, perftest: true},
		{use: "mr", short: "Memory registration cost: reg/dereg latency per size, pooled vs per-op WRITE",
			long:    mrLong,
			example: "  rdmabench mr -d rxe0\n  rdmabench mr --sizes 4K-1G --odp --json mr.json",
			define:  cmdMR},
		{use: "cliffs [HOST]", short: "Find where performance falls off along QPs, message size, depth or reads",
			long: cliffsLong,
			example: "  rdmabench cliffs --axis qps --to 256 --json qps.json\n" +
				"  rdmabench cliffs --axis size --points 64,128,129,256,257,4K,8K --op write -D 2\n" +
				"  rdmabench cliffs 192.0.2.1 --axis tx-depth --runs 5",
			define: cmdCliffs},
		{use: "isolation [HOST]", short: "A victim's latency alone and beside noisy neighbours (attackers), as ratios with intervals",
			long: isolationLong,
			example: "  rdmabench isolation --json iso.json\n" +
				"  rdmabench isolation --attackers bw-hog,rnr-storm --repeat 5 --max-inflation p99=2x\n" +
				"  rdmabench isolation 192.0.2.1 -s 64 -D 2",
			define: cmdIsolation},
		{use: "doctor [HOST]", short: "Check this host (and with HOST both ends) for RDMA's pitfalls, with the fix",
			long: doctorLong,
			example: "  rdmabench doctor\n" +
				"  rdmabench doctor -d mlx5_0 --json doctor.json\n" +
				"  rdmabench doctor 192.0.2.1",
			define: cmdDoctor},
		{use: "accept", short: "Accept a node: each ACTIVE port's doctor, latency and bandwidth judged, a verdict per NIC",
			long: acceptLong,
			example: "  rdmabench accept --json node.json\n" +
				"  rdmabench accept --expect-bw 375Gb/s --expect-lat p50=2us --repeat 5\n" +
				"  rdmabench accept -d mlx5_0,mlx5_1 -D 2",
			define: cmdAccept},
		{use: "compare A.json [B.json ...]", short: "Compare result files; --baseline gates regressions",
			long: compareLong,
			example: "  rdmabench compare a.json b.json\n" +
				"  rdmabench compare a.json b.json --format markdown --metrics p50,p99,bw\n" +
				"  rdmabench compare --baseline base.json new.json --max-regress p99=10%,bw=5%\n" +
				"  rdmabench compare --noise runs.json",
			define: cmdCompare},
		{use: "plot A.json [B.json ...] -o FILE.svg|FILE.png", short: "Plot latency distributions, CDFs, size sweeps, mesh heatmaps",
			long: plotLong(),
			example: "  rdmabench plot a.json b.json -o lat.svg\n" +
				"  rdmabench plot sweep.json --kind size-latency -o sizes.png\n" +
				"  rdmabench plot mesh.json -o heatmap.svg",
			define: cmdPlot},
		{use: "report FILE.json...", short: "Fabrics side by side (RoCE, iWARP, TCP), ratios to TCP",
			long: reportLong,
			example: "  rdmabench report roce.json iwarp.json tcp.json\n" +
				"  rdmabench report roce.json tcp.json --format markdown --plot fabrics.svg",
			define: cmdReport},
		{use: "import perftest FILE...", short: "Read perftest's output into a result document (for compare, report, plot)",
			long: importLong,
			example: "  rdmabench import perftest ib_write_lat.txt -o perftest.json\n" +
				"  rdmabench import perftest --show row ib_send_lat.txt\n" +
				"  rdmabench import perftest --show 'setting:TX depth' ib_write_bw.txt",
			define: cmdImport},
		{use: "version", short: "Print the version, commit and build date",
			long: "Prints rdmabench's version, the commit it was built from and the date, as --version\n" +
				"does and as the result documents record in tool_version: " + strings.Join(wrap(versionSource+".", 80), "\n"),
			example: "  rdmabench version\n  rdmabench --version",
			define:  cmdVersion},
	}
}

// versionSource says where the version comes from (the man page and help).
const versionSource = "from the Go build info, or set by packagers with -ldflags -X " +
	"github.com/rdmabench/rdmabench/internal/version.Version=V (also .Commit and .Date)"

// newRoot builds the command tree writing to stdout and stderr.
func newRoot(stdout, stderr io.Writer) (*cobra.Command, *cliState) {
	cobra.EnableCommandSorting = false
	state := &cliState{}
	root := &cobra.Command{
		Use:   "rdmabench",
		Short: "RDMA verbs latency percentiles and bandwidth (SEND, WRITE, READ)",
		Long:  rootLong,
		Example: "  rdmabench server                                  # on host-a\n" +
			"  rdmabench run host-a --op write --json w.json     # on host-b\n" +
			"  rdmabench compare --baseline base.json w.json     # the regression gate",
		Version:       version.String(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("rdmabench {{.Version}}\n")
	useFlagUsages(root)
	root.SetHelpTemplate(helpTemplate)
	root.SetFlagErrorFunc(flagError)
	for _, sc := range subcommands() {
		root.AddCommand(newSubcommand(sc, state))
	}
	root.AddCommand(manCommand(root), genDocsCommand(root))
	root.InitDefaultVersionFlag()
	root.SetHelpCommand(helpCommand(root))
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil {
		c.Example = "  source <(rdmabench completion bash)\n" +
			"  rdmabench completion bash > /etc/bash_completion.d/rdmabench\n" +
			"  rdmabench completion zsh > \"${fpath[1]}/_rdmabench\"\n" +
			"  rdmabench completion fish > ~/.config/fish/completions/rdmabench.fish"
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error { // cobra's only prints its help, even for an unknown shell
			if len(args) > 0 {
				return usageError{fmt.Errorf("completion %s: unknown shell; valid: bash, zsh, fish, powershell", args[0])}
			}
			return c.Help()
		}
	}
	return root, state
}

// newSubcommand makes sc a cobra command whose flags sc.define defines.
func newSubcommand(sc subcommand, state *cliState) *cobra.Command {
	c := &cobra.Command{Use: sc.use, Short: sc.short, Long: sc.long, Example: sc.example}
	fs := c.Flags()
	fs.SortFlags = false
	if sc.perftest {
		fs.SetNormalizeFunc(perftestNames)
	}
	act := sc.define(fs)
	registerValues(c)
	if c.Name() == "import" {
		c.ValidArgsFunction = completeImport
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		state.started = true
		return act(c.Context(), args, c.OutOrStdout(), c.ErrOrStderr())
	}
	return c
}

// helpCommand is 'rdmabench help [command]': cobra's, except that an
// unknown command is a usage error (exit 2) with cobra's suggestion.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Short:   "Help about any command",
		Long:    "Shows a command's synopsis, description, examples and flags; without one, rdmabench's.",
		Example: "  rdmabench help run\n  rdmabench help compare",
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, c := range root.Commands() {
				if len(args) == 0 && c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					names = append(names, c.Name()+"\t"+c.Short)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			c, _, err := root.Find(args)
			if err != nil {
				return usageError{fmt.Errorf("help: %w", err)}
			}
			c.InitDefaultHelpFlag()
			c.InitDefaultVersionFlag()
			return c.Help()
		},
	}
}

// cmdVersion is 'rdmabench version'.
func cmdVersion(fs *flag.FlagSet) action {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 0 {
			return usageError{fmt.Errorf("version takes no arguments (got %q)", args)}
		}
		_, err := fmt.Fprintf(stdout, "rdmabench %s\n", version.String())
		return err
	}
}
