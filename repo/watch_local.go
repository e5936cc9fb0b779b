package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchLocal watches the refs of a local repository and sends on the
// returned channel, debounced, when the followed branch may have moved.
// It returns a nil channel for remote repositories.
func (w *Watcher) watchLocal(ctx context.Context) (<-chan struct{}, func(), error) {
	if w.opts.DisableFSNotify || w.src.LocalPath() == "" {
		return nil, func() {}, nil
	}
	gitDirs, dirs, err := refDirs(w.src.LocalPath(), w.src.Branch())
	if err != nil {
		return nil, nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, fmt.Errorf("watch %s: %w", w.src.URL(), err)
	}
	rw := &refWatcher{fw: fw, gitDirs: gitDirs, wanted: slices.Concat(gitDirs, dirs),
		out: make(chan struct{}, 1), debounce: w.opts.Debounce}
	rw.addExisting()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { rw.loop(ctx) })
	stop := func() {
		cancel()
		fw.Close()
		wg.Wait()
	}
	return rw.out, stop, nil
}

// refDirs lists the folders whose changes can move the branch: the Git
// dirs (for HEAD and packed-refs), and refs/heads with the folders of the
// branch ref (a branch "team/x" lives in refs/heads/team/).
func refDirs(repoPath, branch string) (gitDirs, dirs []string, err error) {
	gitDir, commonDir, err := findGitDir(repoPath)
	if err != nil {
		return nil, nil, err
	}
	gitDirs = []string{gitDir}
	if commonDir != gitDir {
		gitDirs = append(gitDirs, commonDir)
	}
	d := filepath.Join(commonDir, "refs", "heads")
	dirs = append(dirs, d)
	parts := strings.Split(branch, "/")
	for _, p := range parts[:len(parts)-1] {
		d = filepath.Join(d, p)
		dirs = append(dirs, d)
	}
	return gitDirs, dirs, nil
}

// findGitDir returns the Git dir of a working tree or bare repository,
// and the common dir that holds its refs (they differ for a linked
// worktree).
func findGitDir(repoPath string) (string, string, error) {
	dotGit := filepath.Join(repoPath, ".git")
	fi, err := os.Stat(dotGit)
	switch {
	case err == nil && fi.IsDir():
		return dotGit, dotGit, nil
	case err == nil:
		return gitDirFromFile(repoPath, dotGit)
	}
	if _, err := os.Stat(filepath.Join(repoPath, "HEAD")); err != nil {
		return "", "", fmt.Errorf("%s is not a Git repository", repoPath)
	}
	return repoPath, repoPath, nil
}

// gitDirFromFile follows a ".git" file ("gitdir: <path>") and its
// "commondir" file.
func gitDirFromFile(repoPath, dotGit string) (string, string, error) {
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", "", fmt.Errorf("%s: not a gitdir file", dotGit)
	}
	gitDir := absFrom(repoPath, strings.TrimSpace(dir))
	common := gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = absFrom(gitDir, strings.TrimSpace(string(c)))
	}
	return gitDir, common, nil
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// refWatcher turns fsnotify events into debounced change signals.
type refWatcher struct {
	fw       *fsnotify.Watcher
	gitDirs  []string // where only HEAD and packed-refs matter
	wanted   []string // folders to watch, added as they appear
	out      chan struct{}
	debounce time.Duration
}

func (rw *refWatcher) addExisting() {
	for _, d := range rw.wanted {
		_ = rw.fw.Add(d) // a branch folder may not exist yet
	}
}

func (rw *refWatcher) loop(ctx context.Context) {
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.fw.Events:
			if !ok {
				return
			}
			if rw.relevant(ev) {
				fire = time.After(rw.debounce)
			}
		case _, ok := <-rw.fw.Errors:
			if !ok {
				return
			}
			fire = time.After(rw.debounce) // events may be lost: check
		case <-fire:
			fire = nil
			select {
			case rw.out <- struct{}{}:
			default:
			}
		}
	}
}

// relevant filters out lock files and Git's other bookkeeping; a new
// folder on the branch's path gets watched.
func (rw *refWatcher) relevant(ev fsnotify.Event) bool {
	name := filepath.Base(ev.Name)
	if strings.HasSuffix(name, ".lock") {
		return false
	}
	if ev.Has(fsnotify.Create) && slices.Contains(rw.wanted, ev.Name) {
		rw.addExisting()
	}
	if slices.Contains(rw.gitDirs, filepath.Dir(ev.Name)) {
		return name == "HEAD" || name == "packed-refs"
	}
	return true
}
