package sops

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// remoteService is a sops key service reached over gRPC (`sops
// keyservice`, or any server of its API).
type remoteService struct {
	uri    string
	conn   *grpc.ClientConn
	client keyservice.KeyServiceClient
}

// dialKeyService connects to a key service as the sops CLI's --keyservice
// does: tcp://host:port or unix:///path, without TLS (use a local socket
// or a tunnel). The connection is made on first use.
func dialKeyService(uri string) (remoteService, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "tcp" && u.Scheme != "unix") {
		return remoteService{}, fmt.Errorf("key service %q: want tcp://host:port or unix:///path", uri)
	}
	target, network, addr := "passthrough:///"+u.Host, u.Scheme, u.Host
	if u.Scheme == "unix" {
		target, addr = "passthrough:///"+u.Path, u.Path
	}
	if addr == "" {
		return remoteService{}, fmt.Errorf("key service %q: no address", uri)
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}))
	if err != nil {
		return remoteService{}, fmt.Errorf("key service %q: %w", uri, err)
	}
	return remoteService{uri: uri, conn: conn, client: keyservice.NewKeyServiceClient(conn)}, nil
}

func (r remoteService) close() error { return r.conn.Close() }
