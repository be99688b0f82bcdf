package fabric

// Output formats of rdmabench report (--format).
const (
	FormatText     = "text"     // aligned, perftest style (Report.WriteText)
	FormatMarkdown = "markdown" // GitHub tables (Report.WriteMarkdown)
)

// Formats lists them, the default first.
var Formats = []string{FormatText, FormatMarkdown}
