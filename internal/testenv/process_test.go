package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExitErrorCarriesLogTailAndDetectsTakenPort(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "p.log")
	never := func(context.Context) error { return context.DeadlineExceeded }
	cases := map[string]bool{
		"echo starting; echo 'listen tcp 127.0.0.1:1: bind: address already in use'; exit 1": true,
		"echo starting; echo 'some other failure'; exit 3":                                   false,
	}
	for script, inUse := range cases {
		p, err := startProcess("fake", logPath, nil, "/bin/sh", "-c", script)
		if err != nil {
			t.Fatal(err)
		}
		err = waitReady(t.Context(), p, 10*time.Second, never)
		if err == nil || !strings.Contains(err.Error(), "starting") {
			t.Errorf("%q: got %v, want an error with the log tail", script, err)
		}
		if isAddrInUse(err) != inUse {
			t.Errorf("%q: isAddrInUse(%v) = %t, want %t", script, err, !inUse, inUse)
		}
	}
}

func TestStopKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "p.log")
	p, err := startProcess("stubborn", logPath, nil, "/bin/sh", "-c", "trap '' TERM; echo trapped; sleep 60 & wait")
	if err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, "the shell's trap installed", func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "trapped")
	})
	begin := time.Now()
	p.stop(300 * time.Millisecond)
	if !p.exited() || time.Since(begin) > 5*time.Second {
		t.Errorf("stop: exited=%t after %s", p.exited(), time.Since(begin))
	}
}
