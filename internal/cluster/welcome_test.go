package cluster_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/weir-stream/weir/internal/cluster"
)

// A coordinator address that takes connections but never answers (a
// frozen process: the kernel accepts for it) does not hold a worker: it
// gives up after its welcome timeout and joins the next coordinator.
func TestAWorkerLeavesACoordinatorThatNeverWelcomesIt(t *testing.T) {
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Go(func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or written
			mu.Unlock()
		}
	})
	defer func() {
		mute.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	}()
	coordLogs, workerLogs := newLogLines(), newLogLines()
	c := startCoordinator(t, cluster.Security{}, coordLogs)
	w := startWorker(t, context.Background(), cluster.WorkerConfig{ID: "w1", Slots: 1,
		Coordinators: []string{mute.Addr().String(), c.Addr()}, Log: workerLogs.add})
	defer w.stop()
	workerLogs.wait(t, `did not welcome the worker within`)
	coordLogs.wait(t, `^worker w1 joined`)
}
