package plot

import (
	"slices"
	"testing"
)

// TestKindTable: every kind Draw and the document plots take is in
// KindTable, once, with its help and doc, in KindNames' order first.
func TestKindTable(t *testing.T) {
	want := append(slices.Clone(KindNames), KindHeatmap, KindCliffs)
	if got := KindArgs(); !slices.Equal(got, want) {
		t.Errorf("KindArgs() = %v, want %v", got, want)
	}
	for _, k := range KindTable {
		if k.Help == "" || k.Doc == "" {
			t.Errorf("kind %s: help %q doc %q: both needed", k.Name, k.Help, k.Doc)
		}
	}
}
