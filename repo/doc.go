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
// The daemon:
//
//	src, err := repo.NewSource(repo.Options{URL: url, Branch: "main", Auth: auth})
//	w := repo.NewWatcher(src, repo.DefaultWatchOptions())
//	go w.Run(ctx, func(ev repo.Event) {
//		if ev.Err != nil { ... report; src.Revision() is still the last good one }
//		c, _ := src.Commit(ctx, ev.Revision)
//		if c.ByRegatta(author) { ... or src.TreesEqualExcept(ctx, ev.Previous, ev.Revision, "status") }
//		tree, _ := src.Tree(ctx, ev.Revision) // an fs.FS; TreeHash keys the render cache
//	})
//	res, err := src.CommitAndPush(ctx, repo.CommitRequest{Branch: "regatta/status", Prefix: "status",
//		Files: files, Prune: true, Trailers: []repo.Trailer{{repo.TrailerSourceRevision, rev}}})
//
// `regatta plan --base --head` and `regatta render --revision` on a clone:
//
//	r, err := repo.Open(dir)
//	base, err := r.Tree(ctx, "main")
//	head, err := r.Tree(ctx, "HEAD")
package repo
