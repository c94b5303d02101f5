package cli_test

import (
	wire "encoding/binary"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// With --token and no mutual TLS, a data plane connection must prove that
// it knows the token before the worker reads any element from it. Someone
// who read an attempt's key in a worker's log connects to every worker's
// data port with it and sends watermarks far in the future to every
// channel of the windowed count (they would fire every window early), and
// someone else sends garbage: each worker refuses and logs the
// connections, no attempt fails, and the output is the failure-free
// output. The workers compress what they send each their own way
// (--exchange-compression), which changes nothing in the output.
func TestClusterDataPlaneRefusesConnectionsWithoutTheToken(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m", flags: []string{"--token", "s3cret"}}
	c.store = filepath.Join(c.dir, "store")
	c.startCoordinator("127.0.0.1:0")
	compression := map[string]string{"w1": "lz4", "w2": "zstd", "w3": "none", "w4": "lz4"}
	for _, id := range []string{"w1", "w2", "w3", "w4"} { // w4 is spare: the restart runs at once
		c.startWorker(id, "--exchange-compression", compression[id], "--cpus", "1")
	}
	client, out := c.submit(keycount, "--rate", "150000")
	c.coord.waitFor(`checkpoint 2 completed`)
	// A restarted attempt logs its key.
	c.workers["w1"].kill()
	for _, id := range []string{"w2", "w3", "w4"} {
		w := c.workers[id]
		key := w.waitFor(`attempt (keycount-1/\S+) running: restored`)[1]
		addr := w.waitFor(`data plane on (\S+), 1 slots on 1 cores,`)[1]
		from := w.mark()
		forge(t, addr, forgedWatermarks(key))
		w.waitFrom(from, `data plane: refused a connection from`)
		from = w.mark()
		forge(t, addr, []byte("\x00\x00\x00\x09\x01garbage!"))
		w.waitFrom(from, `data plane: refused a connection from`)
	}
	c.check(client, out, ref)
	if s := c.coord.output(); strings.Contains(s, "failure 2") {
		t.Fatalf("forged data plane traffic failed an attempt:\n%s", s)
	}
}

// forgedWatermarks is a hello in the format of a data connection before
// authentication (the endpoint key alone) followed by a watermark at the
// end of time for every channel of the three subtasks of the count (task
// 1, fed by the three sources).
func forgedWatermarks(key string) []byte {
	b := wire.BigEndian.AppendUint32(nil, uint32(1+len(key)))
	b = append(b, 0)
	b = append(b, key...)
	for subtask := range 3 {
		for ch := range 3 {
			b = wire.BigEndian.AppendUint32(b, 4+1+12+1+1+8+8+8+4-4)
			b = append(b, 1) // element
			b = wire.BigEndian.AppendUint32(b, 1)
			b = wire.BigEndian.AppendUint32(b, uint32(subtask))
			b = wire.BigEndian.AppendUint32(b, uint32(ch))
			b = append(b, 1, 0)                       // watermark, no flags
			b = wire.BigEndian.AppendUint64(b, 1<<62) // time
			b = wire.BigEndian.AppendUint64(b, 0)     // checkpoint
			b = wire.BigEndian.AppendUint64(b, 0)     // sequence
			b = wire.BigEndian.AppendUint32(b, 0)     // records
		}
	}
	return b
}

// forge sends b on a new connection to addr and closes its sending side.
func forge(t *testing.T, addr string, b []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(b) // a refusing worker may close before it read everything
	c.(*net.TCPConn).CloseWrite()
	buf := make([]byte, 512)
	for { // until the worker closes: it has read what it takes
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}
