package main

// bench/timeline (counter timelines) is a pure package: it joins the list
// here, in a file of its own, beside the other packages' entries.
func init() { purePackages = append(purePackages, "./bench/timeline") }
