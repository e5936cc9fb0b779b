// Package repo follows a fleet Git repository with go-git: it clones and
// fetches one branch over HTTPS, SSH, file:// or a local path into bare
// storage (in memory or on disk), reads trees at any revision as an io/fs.FS
// without a working tree, detects new commits (polling the remote ref, and
// fsnotify for local repositories), and commits and pushes status files.
//
// Credentials come in through Options and never appear in errors or logs:
// URLs are redacted with RedactURL and every error is scrubbed of the
// password, token and key passphrase before it leaves the package.
//
// Typical use by the daemon:
//
//	src, err := repo.NewSource(repo.Options{URL: url, Branch: "main", Auth: auth})
//	w := repo.NewWatcher(src, repo.WatchOptions{Interval: 30 * time.Second})
//	go w.Run(ctx, func(ev repo.Event) { ... src.Tree(ctx, ev.Revision) ... })
//
// and by `regatta plan` / `regatta render --revision` on a local clone:
//
//	r, err := repo.Open(dir)
//	base, err := r.Tree(ctx, "main")
//	head, err := r.Tree(ctx, "HEAD")
package repo
