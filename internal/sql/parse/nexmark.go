package parse

import (
	"embed"
	"fmt"
	"strings"
)

// nexmarkFiles are the Nexmark benchmark's published Flink SQL files
// (testdata/nexmark, see its README), embedded so that programs can run
// the queries from their published text: the parser's tests read the
// same files.
//
//go:embed testdata/nexmark/*.sql
var nexmarkFiles embed.FS

// NexmarkScript returns the script of Nexmark query q ("q5") as the
// Nexmark benchmark runs it on Flink: ddl_gen.sql (the generator table
// "datagen"), ddl_views.sql (the views person, auction and bid over
// ${NEXMARK_TABLE}) and qN.sql (its sink table and INSERT), separated by
// semicolons, with the ${...} placeholders left for Substitute.
func NexmarkScript(q string) (string, error) {
	var b strings.Builder
	for _, f := range []string{"ddl_gen.sql", "ddl_views.sql", q + ".sql"} {
		data, err := nexmarkFiles.ReadFile("testdata/nexmark/" + f)
		if err != nil {
			return "", fmt.Errorf("no published Nexmark SQL for %q", q)
		}
		b.Write(data)
		b.WriteString(";\n")
	}
	return b.String(), nil
}
