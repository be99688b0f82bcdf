package bench

import (
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The test definition lives in bench/spec (pure Go). These aliases keep
// the names the rest of bench and its callers used before the move; new
// code may use the spec package directly.

// Spec, Plan and Load are bench/spec's.
type (
	Spec = spec.Spec
	Plan = spec.Plan
	Load = spec.Load
)

// Defaults (bench/spec/defaults.go).
const (
	DefaultPort           = spec.DefaultPort
	DefaultLatIters       = spec.DefaultLatIters
	DefaultBWIters        = spec.DefaultBWIters
	DefaultLatSize        = spec.DefaultLatSize
	DefaultBWSize         = spec.DefaultBWSize
	DefaultTxDepth        = spec.DefaultTxDepth
	DefaultCQMod          = spec.DefaultCQMod
	DefaultRxDepth        = spec.DefaultRxDepth
	DefaultLatWarmup      = spec.DefaultLatWarmup
	DefaultLoadTxDepth    = spec.DefaultLoadTxDepth
	DefaultLoadSize       = spec.DefaultLoadSize
	DefaultQPTimeout      = spec.DefaultQPTimeout
	DefaultRetryCount     = spec.DefaultRetryCount
	DefaultRNRRetry       = spec.DefaultRNRRetry
	DefaultRNRTimer       = spec.DefaultRNRTimer
	DefaultVerifyMessages = spec.DefaultVerifyMessages
	DefaultCacheLine      = spec.DefaultCacheLine
	DefaultMaxQPs         = spec.DefaultMaxQPs
)

// bidirInterval is Spec.TimedInterval of a bidirectional test.
const bidirInterval = spec.BidirInterval

// pageSize is the default address cycle, bytes (spec.PageSize).
var pageSize = spec.PageSize

// Limits (bench/spec/validate.go and the feature files beside it).
const (
	AtomicSize          = spec.AtomicSize
	MaxAddrCycle        = spec.MaxAddrCycle
	MaxCompVector       = spec.MaxCompVector
	MaxDepth            = spec.MaxDepth
	MaxDuration         = spec.MaxDuration
	MaxInline           = spec.MaxInline
	MaxIters            = spec.MaxIters
	MaxLoadQPs          = spec.MaxLoadQPs
	MaxOutstandingReads = spec.MaxOutstandingReads
	MaxPKeyIndex        = spec.MaxPKeyIndex
	MaxPostList         = spec.MaxPostList
	MaxQPs              = spec.MaxQPs
	MaxRate             = spec.MaxRate
	MaxRepeat           = spec.MaxRepeat
	MaxSize             = spec.MaxSize
	MaxSweepPoints      = spec.MaxSweepPoints
	MinLimitMsgRate     = spec.MinLimitMsgRate
	MinRate             = spec.MinRate
)

// Inline policies (bench/spec/inline.go).
const (
	InlineAuto     = spec.InlineAuto
	InlineSize     = spec.InlineSize
	InlinePerftest = spec.InlinePerftest
)

// Parsers of flag values (bench/spec/parse.go, loadsweep.go).
var (
	ParseSize      = spec.ParseSize
	ParseSizes     = spec.ParseSizes
	ParseCPUs      = spec.ParseCPUs
	ParseList      = spec.ParseList
	ParseLoadSweep = spec.ParseLoadSweep
)

// Host checks (bench/hostenv).
var (
	CheckEnv     = hostenv.CheckEnv
	OnlineCPUs   = hostenv.OnlineCPUs
	memlockLimit = hostenv.MemlockLimit
)
