package sandbox

import (
	"slices"
	"sync"
	"time"
)

// idleList keeps children between calls.
type idleList struct {
	mu   sync.Mutex
	list []*child
}

func (l *idleList) take() *child {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.list)
	if n == 0 {
		return nil
	}
	c := l.list[n-1]
	l.list = l.list[:n-1]
	c.timer.Stop() // expire finds it gone from the list if it fired
	return c
}

// put keeps c unless it holds much memory or enough children are idle.
func (l *idleList) put(c *child, o Options) {
	if rss, ok := ResidentMemory(c.cmd.Process.Pid); ok && rss > o.MaxMemory/2 {
		c.kill()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) >= o.MaxWorkers {
		go c.kill()
		return
	}
	l.list = append(l.list, c)
	c.timer = time.AfterFunc(o.IdleTimeout, func() { l.expire(c) })
}

// expire ends a child still idle when its idle timeout fires.
func (l *idleList) expire(c *child) {
	l.mu.Lock()
	i := slices.Index(l.list, c)
	if i >= 0 {
		l.list = slices.Delete(l.list, i, i+1)
	}
	l.mu.Unlock()
	if i >= 0 {
		c.kill()
	}
}

func (l *idleList) drain() {
	l.mu.Lock()
	list := l.list
	l.list = nil
	l.mu.Unlock()
	for _, c := range list {
		c.timer.Stop()
		c.kill()
	}
}

func (l *idleList) processes() []Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := make([]Process, len(l.list))
	for i, c := range l.list {
		ps[i] = Process{Pid: c.cmd.Process.Pid, Exited: c.exited}
	}
	return ps
}
