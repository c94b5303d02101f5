package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
)

// ParseAddrs splits a comma-separated list of coordinator addresses.
func ParseAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// DialLeader connects to the leading coordinator among addrs: it asks
// each (Leader) in turn, and first the leader a standby names. It returns
// the connection and the leader's address, or an error with
// codes.Unavailable when none leads (a takeover under way, say), which a
// caller may retry; with one address, that address's error as it is.
func DialLeader(ctx context.Context, sec Security, addrs []string) (*grpc.ClientConn, string, error) {
	queue := slices.Clone(addrs)
	tried := map[string]bool{}
	var errs []error
	for len(queue) > 0 {
		addr := queue[0]
		queue = queue[1:]
		if tried[addr] {
			continue
		}
		tried[addr] = true
		conn, err := sec.Dial(addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := pb.NewCoordinatorClient(conn).Leader(cctx, &pb.LeaderRequest{})
		cancel()
		if err == nil && info.Leading {
			return conn, addr, nil
		}
		conn.Close()
		if err != nil {
			if len(addrs) == 1 {
				return nil, addr, err
			}
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
			continue
		}
		if info.LeaderAddr != "" && !tried[info.LeaderAddr] {
			queue = append([]string{info.LeaderAddr}, queue...)
		}
		errs = append(errs, fmt.Errorf("%s is a standby", addr))
	}
	return nil, "", status.Errorf(codes.Unavailable, "no coordinator leads: %v", errors.Join(errs...))
}
