package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

// handover asks the leading coordinator among c's addresses to hand
// over, after checking that one of the others is a standby to take
// over, and prints the new leader's address once one leads.
func handover(ctx context.Context, c *client, stdout, stderr io.Writer) error {
	addrs := cluster.ParseAddrs(c.addr)
	var leader string
	var standbys, unreachable []string
	for _, addr := range addrs {
		info, err := leaderInfo(ctx, c, addr)
		switch {
		case err != nil:
			unreachable = append(unreachable, fmt.Sprintf("%s (%v)", addr, err))
		case info.Leading:
			leader = addr
		default:
			standbys = append(standbys, addr)
		}
	}
	if leader == "" {
		return fmt.Errorf("no coordinator among %s leads%s", c.addr, describeUnreachable(unreachable))
	}
	if len(standbys) == 0 {
		return fmt.Errorf("no standby among %s to hand over to: start one on the same store with weir coordinator --ha, and name it in --coordinator%s", c.addr, describeUnreachable(unreachable))
	}
	conn, err := c.sec.Dial(leader)
	if err != nil {
		return err
	}
	defer conn.Close()
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := pb.NewCoordinatorClient(conn).Handover(hctx, &pb.HandoverRequest{}); err != nil {
		return fmt.Errorf("coordinator %s: %w", leader, err)
	}
	fmt.Fprintf(stderr, "weir: coordinator %s handed over; waiting for a standby to lead\n", leader)
	for {
		for _, addr := range standbys {
			if info, err := leaderInfo(hctx, c, addr); err == nil && info.Leading {
				fmt.Fprintln(stdout, addr)
				return nil
			}
		}
		select {
		case <-hctx.Done():
			return fmt.Errorf("no standby among %s took over within 30s", strings.Join(standbys, ","))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// leaderInfo asks the coordinator at addr whether it leads.
func leaderInfo(ctx context.Context, c *client, addr string) (*pb.LeaderInfo, error) {
	conn, err := c.sec.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return pb.NewCoordinatorClient(conn).Leader(ctx, &pb.LeaderRequest{})
}

func describeUnreachable(addrs []string) string {
	if len(addrs) == 0 {
		return ""
	}
	return "; unreachable: " + strings.Join(addrs, ", ")
}
