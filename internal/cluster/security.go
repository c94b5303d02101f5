package cluster

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Security is what every process of a cluster shares to trust the others.
// The zero value is plain TCP without authentication, for a trusted
// network only.
type Security struct {
	// CertFile, KeyFile and CAFile turn on mutual TLS: every process
	// presents its certificate and accepts only peers whose certificate
	// the CA signed. All three or none.
	CertFile, KeyFile, CAFile string
	// Token, if set, must accompany every call to the coordinator, as
	// "authorization: Bearer TOKEN", and keys the handshake that
	// authenticates every data plane connection between workers
	// (transport.Config.Secret).
	Token string
}

// TLS returns the server and client TLS configurations, or nils when
// mutual TLS is off.
func (s Security) TLS() (server, client *tls.Config, err error) {
	if s.CertFile == "" && s.KeyFile == "" && s.CAFile == "" {
		return nil, nil, nil
	}
	if s.CertFile == "" || s.KeyFile == "" || s.CAFile == "" {
		return nil, nil, errors.New("mutual TLS needs a certificate, its key and the CA certificate (--tls-cert, --tls-key, --tls-ca)")
	}
	cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the TLS certificate %s: %w", s.CertFile, err)
	}
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("the CA file %s holds no PEM certificate", s.CAFile)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
	return server, client, nil
}

// serverOptions returns the gRPC server options: TLS credentials and the
// token check on every call.
func (s Security) serverOptions() ([]grpc.ServerOption, error) {
	server, _, err := s.TLS()
	if err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if server != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(server)))
	}
	if s.Token != "" {
		opts = append(opts,
			grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				if err := s.checkToken(ctx); err != nil {
					return nil, err
				}
				return h(ctx, req)
			}),
			grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				if err := s.checkToken(ss.Context()); err != nil {
					return err
				}
				return h(srv, ss)
			}))
	}
	return opts, nil
}

func (s Security) checkToken(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		got, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "the coordinator requires a bearer token (--token or WEIR_TOKEN), and the call had none or a wrong one")
}

// Dial connects a client or worker to the coordinator at addr.
func (s Security) Dial(addr string) (*grpc.ClientConn, error) {
	_, client, err := s.TLS()
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if client != nil {
		creds = credentials.NewTLS(client)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if s.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{s.Token, client != nil}))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator address %q: %w", addr, err)
	}
	return conn, nil
}

type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
