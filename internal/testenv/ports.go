package testenv

import (
	"fmt"
	"net"
	"sync"
)

// ports hands out free loopback TCP ports, never the same one twice within
// an Env, so that processes started side by side do not collide.
type ports struct {
	mu   sync.Mutex
	used map[int]bool
}

func newPorts() *ports { return &ports{used: map[int]bool{}} }

// free returns a port that was free a moment ago on 127.0.0.1.
func (p *ports) free() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !p.used[port] {
			p.used[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a free port: the kernel kept offering used ones")
}
