module github.com/rdmabench/rdmabench

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)
