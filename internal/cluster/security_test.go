package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

// pki writes a CA and a certificate it signed for 127.0.0.1, and a second
// certificate signed by another CA.
func pki(t *testing.T) (good, rogue cluster.Security) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	issue := func(prefix string) cluster.Security {
		caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: prefix + " CA"}, IsCA: true,
			BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: prefix}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		caCert, _ := x509.ParseCertificate(caDER)
		der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		return cluster.Security{CAFile: write(prefix+"-ca.pem", "CERTIFICATE", caDER), CertFile: write(prefix+".pem", "CERTIFICATE", der),
			KeyFile: write(prefix+"-key.pem", "EC PRIVATE KEY", keyDER)}
	}
	return issue("good"), issue("rogue")
}

func startCoordinator(t *testing.T, sec cluster.Security, logs *logLines) *cluster.Coordinator {
	t.Helper()
	c, err := cluster.NewCoordinator(context.Background(), cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: t.TempDir(), Security: sec, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func listJobs(sec cluster.Security, addr string) error {
	conn, err := sec.Dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pb.NewCoordinatorClient(conn).ListJobs(ctx, &pb.ListJobsRequest{})
	return err
}

func TestTokenIsRequired(t *testing.T) {
	c := startCoordinator(t, cluster.Security{Token: "s3cret"}, newLogLines())
	err := listJobs(cluster.Security{}, c.Addr())
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "bearer token") {
		t.Fatalf("a call without a token: %v, want Unauthenticated naming the token", err)
	}
	if err := listJobs(cluster.Security{Token: "wrong"}, c.Addr()); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call with a wrong token: %v, want Unauthenticated", err)
	}
	if err := listJobs(cluster.Security{Token: "s3cret"}, c.Addr()); err != nil {
		t.Fatalf("a call with the token: %v", err)
	}
}

func TestMutualTLSRefusesUnknownPeers(t *testing.T) {
	good, rogue := pki(t)
	good.Token = "s3cret"
	logs := newLogLines()
	c := startCoordinator(t, good, logs)
	if err := listJobs(good, c.Addr()); err != nil {
		t.Fatalf("a client with a certificate of the cluster's CA: %v", err)
	}
	if err := listJobs(cluster.Security{Token: "s3cret"}, c.Addr()); err == nil {
		t.Fatal("a plain-text client was served")
	}
	rogue.Token = "s3cret"
	if err := listJobs(rogue, c.Addr()); err == nil {
		t.Fatal("a client with a certificate of another CA was served")
	}

	// A worker with the cluster's certificate joins; its data plane
	// refuses a plain connection.
	w, err := cluster.NewWorker(cluster.WorkerConfig{ID: "w1", Coordinators: []string{c.Addr()}, Security: good})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	logs.wait(t, `^worker w1 joined`)
	conn, err := net.Dial("tcp", w.DataAddr())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("\x00\x00\x00\x05\x00weir")) // a data plane hello, in plain text
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the TLS data plane kept a plain-text connection open")
	}
	if len(got) > 0 && got[0] != 0x15 { // at most a TLS alert record
		t.Fatalf("the TLS data plane answered a plain-text peer with %q", got)
	}
	conn.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A worker whose token the coordinator refuses stops with the reason
// instead of reconnecting forever; trying again cannot help.
func TestWorkerWithAWrongTokenStopsWithTheReason(t *testing.T) {
	c := startCoordinator(t, cluster.Security{Token: "s3cret"}, newLogLines())
	logs := make(chan string, 100)
	w, err := cluster.NewWorker(cluster.WorkerConfig{ID: "w1", Coordinators: []string{c.Addr()}, Slots: 1, Security: cluster.Security{Token: "wrong"},
		Log: func(line string) {
			select {
			case logs <- line:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	watchdog := time.NewTimer(2 * time.Minute) // a hang, not a timing assertion
	defer watchdog.Stop()
	for {
		select {
		case err := <-done:
			if !errors.Is(err, cluster.ErrRejected) || !strings.Contains(err.Error(), "bearer token") {
				t.Fatalf("Run returned %v, want ErrRejected with the coordinator's reason", err)
			}
			return
		case line := <-logs:
			if strings.Contains(line, "reconnecting") {
				t.Fatalf("the rejected worker reconnects: %s", line)
			}
		case <-watchdog.C:
			buf := make([]byte, 1<<20)
			t.Fatalf("Run neither returned nor reconnected; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
	}
}
