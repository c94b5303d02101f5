package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/internal/cluster"
)

// weir savepoint and weir stop --savepoint fail with exit status 1 and
// the coordinator's reason for a job it does not know (the other
// refusals: TestSavepointCallsRefuseWhatCannotTakeASavepoint); weir stop
// without --savepoint is a usage error.
func TestClusterSavepointCommandsExplainTheirRefusals(t *testing.T) {
	ctx := context.Background()
	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: filepath.Join(t.TempDir(), "store"), Log: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"savepoint", "nosuch-1", "--dir", t.TempDir()}, 1, `no job "nosuch-1"`},
		{[]string{"stop", "nosuch-1", "--savepoint"}, 1, `no job "nosuch-1"`},
		{[]string{"stop", "nosuch-1"}, cli.ExitUsage, "give --savepoint"},
	} {
		var stdout, stderr strings.Builder
		code := cli.Run(ctx, append(tc.args, "--coordinator", c.Addr()), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
			t.Errorf("weir %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
}
