// Package dashboard is `ump serve`: a read-only web page over a store that
// follows its sweeps as they run. A Server follows the store's events
// (eventlog.Follower: it holds no lock, so a writer is never blocked or
// slowed), answers a JSON API built from the same folds as ump's commands
// (tables laid out as `ump table` does, curves as `ump plot` draws them,
// exports byte for byte as `ump export` writes them) and a state the page
// asks for once a second to learn that something changed. The page itself is a
// single-page app embedded in the binary (assets/: HTML, one script, one
// style sheet; no CDN) that draws its figures as SVG.
//
// Every request is checked: hashes, cell numbers and names from the URL
// are validated against the store's registrations before use, and no file
// is served but the embedded assets and blobs that events name. Without a
// token the server answers only requests addressed to a loopback name
// (DNS rebinding); with one, every request must carry it.
//
// Imports: artifacts, eventlog, figure, manifests, report, stages, state.
package dashboard
