package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// The range ports are drawn from: below Linux's ephemeral range (32768 and
// up), so that an outgoing connection cannot take a port between the moment
// it is found free and the moment a server binds it.
const (
	minPort = 10000
	maxPort = 32767
)

// ports hands out free loopback TCP ports, never the same one twice within
// an Env, so that processes started side by side do not collide.
type ports struct {
	mu   sync.Mutex
	used map[int]bool
}

func newPorts() *ports { return &ports{used: map[int]bool{}} }

// FreePort returns a loopback port below the ephemeral range that was free
// a moment ago, for a test's own server (metrics, webhooks).
func FreePort() (int, error) { return newPorts().free() }

// free returns a port below the ephemeral range that was free a moment ago
// on 127.0.0.1.
func (p *ports) free() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range 200 {
		port := minPort + rand.IntN(maxPort-minPort+1)
		if p.used[port] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		p.used[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("find a free port in %d-%d: 200 tries found none", minPort, maxPort)
}
