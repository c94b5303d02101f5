package tables

import (
	"os"
	"strings"
	"testing"
)

// The user documentation has a section for every connector and names each
// of its options and metadata keys.
func TestEveryConnectorAndOptionIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../../docs/sql/connectors.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range Connectors() {
		if !strings.Contains(doc, "\n## "+c.Name+"\n") {
			t.Errorf("no section for connector %s", c.Name)
		}
		if c.Doc == "" {
			t.Errorf("connector %s has no Doc", c.Name)
		}
		for _, o := range c.Options {
			if !strings.Contains(doc, "`"+o.Name+"`") {
				t.Errorf("connector %s: option %s is not documented", c.Name, o.Name)
			}
			if o.Doc == "" {
				t.Errorf("connector %s: option %s has no Doc", c.Name, o.Name)
			}
		}
		for _, m := range c.Metadata {
			if !strings.Contains(doc, "| `"+m+"` |") {
				t.Errorf("connector %s: metadata %s is not documented", c.Name, m)
			}
		}
	}
}
