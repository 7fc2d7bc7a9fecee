package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	Dir   string          // the store directory
	Blobs artifacts.Store // where the store's artifacts are when not in its own blobs (--artifacts), or nil
	// Token, when not empty, must come with every request: as ?token= (the
	// server then sets a cookie), the cookie, or an Authorization: Bearer
	// header. Without one, only requests to a loopback name are answered.
	Token string
}

// pollEvery is how often the server looks at the store.
const pollEvery = 500 * time.Millisecond

// Server serves the page and its API over one store.
type Server struct {
	o        Options
	follower *eventlog.Follower
	mux      *http.ServeMux

	blobs *blobCache // the store's blobs, or Options.Blobs

	mu    sync.RWMutex  // Lock: the poller refreshing; RLock: requests reading
	dir   *eventlog.Dir // the store as last read: its events, its writer
	store state.Source  // its events and the cached blobs
	state storeState

	regsMu     sync.Mutex // guards regs and registered, filled while requests read
	regs       []state.Registration
	registered int // ManifestRegistered and ManifestForgotten events that regs folds
}

// storeState is what the page watches for: a new event, another writer, a
// newer snapshot of the running sweep, a refresh error.
type storeState struct {
	Seq     uint64 `json:"seq"`
	Writer  string `json:"writer"`
	Updated string `json:"updated,omitempty"` // the run's snapshot's time
	Error   string `json:"error,omitempty"`
}

// New reads the store's events and returns a server over it; an error
// here (no store, a damaged one) is the store's.
func New(o Options) (*Server, error) {
	s := &Server{o: o, follower: eventlog.NewFollower(o.Dir)}
	if _, err := s.follower.Refresh(); err != nil {
		return nil, err
	}
	if o.Blobs == nil {
		o.Blobs = s.follower.Dir().Local
	}
	s.blobs = &blobCache{Store: o.Blobs, kept: map[artifacts.Ref][]byte{}}
	s.refresh()
	s.routes()
	return s, nil
}

// Serve answers requests on ln and follows the store until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				srv.Shutdown(shutdown)
				return
			case <-tick.C:
				s.refresh()
			}
		}
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// refresh reads what the store's writers added since the last look.
func (s *Server) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := storeState{}
	if _, err := s.follower.Refresh(); err != nil {
		next.Error = err.Error() // the events read before stay
	}
	s.dir = s.follower.Dir()
	s.store = state.Source{Dir: s.dir.Path, Events: s.dir.Events, Blobs: s.blobs}
	next.Seq, next.Writer = s.follower.Seq(), s.dir.Beside
	if snap := s.snapshot(); snap != nil {
		next.Updated = snap.Updated.Format(time.RFC3339Nano)
	}
	s.state = next
}

// snapshot is the progress the store's writer publishes, when it is a
// run (nil for none, or a writer that publishes none). The caller holds mu.
func (s *Server) snapshot() *eventlog.Snapshot {
	if s.dir.Beside == "" {
		return nil
	}
	snap, err := eventlog.ReadSnapshot(s.o.Dir)
	if pid, _ := eventlog.Holder(s.o.Dir); err != nil || snap.PID != pid {
		return nil
	}
	return snap
}

// registrations are the store's manifests (Source.Manifests), decoded
// again only when a manifest was registered or forgotten since the last call. The
// caller holds mu (read).
func (s *Server) registrations() ([]state.Registration, error) {
	evs, err := s.store.Events.ByKind(eventlog.ManifestRegistered)
	if err != nil {
		return nil, err
	}
	forgets, err := s.store.Events.ByKind(eventlog.ManifestForgotten)
	if err != nil {
		return nil, err
	}
	s.regsMu.Lock()
	defer s.regsMu.Unlock()
	if s.regs == nil || len(evs)+len(forgets) != s.registered {
		regs, err := s.store.Manifests()
		if err != nil {
			return nil, err
		}
		s.regs, s.registered = regs, len(evs)+len(forgets)
	}
	return s.regs, nil
}

// Handler is the server's HTTP handler: access checks, then the routes.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set(
			"Content-Security-Policy",
			"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
		)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "ump serve is read-only: only GET", http.StatusMethodNotAllowed)
			return
		}
		if !s.allowed(w, r) {
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// tokenCookie is the cookie that carries the token after the first
// request gave it in the URL.
const tokenCookie = "ump_token"

// allowed checks the request's token, or without a token its Host, and
// answers a refused one.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request) bool {
	if s.o.Token == "" {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !loopbackName(host) {
			http.Error(
				w,
				fmt.Sprintf("ump serve answers only requests to localhost or a loopback address (this one is to %q); "+
					"to serve other hosts, start it with --addr, which requires a token", r.Host),
				http.StatusForbidden,
			)
			return false
		}
		return true
	}
	given := r.URL.Query().Get("token")
	if given != "" && s.tokenIs(given) {
		http.SetCookie(
			w,
			&http.Cookie{Name: tokenCookie, Value: given, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode},
		)
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && s.tokenIs(c.Value) {
		return true
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenIs(bearer) {
		return true
	}
	http.Error(
		w,
		"ump serve needs the token it printed when it started: open the address it printed, which ends in ?token=…",
		http.StatusUnauthorized,
	)
	return false
}

func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.o.Token)) == 1
}

// loopbackName reports whether a Host names this machine's loopback.
func loopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port) listens on loopback only:
// the one case where ump serve needs no token.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackName(host)
}

func (s *Server) routes() {
	static, _ := fs.Sub(assets, "assets")
	s.mux = http.NewServeMux()
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	s.mux.HandleFunc("GET /api/state", s.api(s.stateView))
	s.mux.HandleFunc("GET /api/store", s.api(s.storeView))
	s.mux.HandleFunc("GET /api/manifests/{hash}", s.api(s.manifestView))
	s.mux.HandleFunc("GET /api/manifests/{hash}/table", s.api(s.tableView))
	s.mux.HandleFunc("GET /api/manifests/{hash}/entries/{row}/{column}", s.api(s.entryView))
	s.mux.HandleFunc("GET /api/manifests/{hash}/curves", s.api(s.curvesView))
	s.mux.HandleFunc("GET /api/manifests/{hash}/cells/{cell}", s.api(s.cellView))
	s.mux.HandleFunc("GET /api/manifests/{hash}/export", s.export)
}

// requestError is an error in what the request asked for, with its
// HTTP status.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &requestError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// api answers a JSON view, computed under the read lock.
func (s *Server) api(view func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.RLock()
		v, err := view(r)
		s.mu.RUnlock()
		w.Header().Set("Cache-Control", "no-store")
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var re *requestError
	if errors.As(err, &re) {
		status = re.status
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// stateView is what the page asks for once a second: a change in it
// (a new event, another writer, a newer snapshot of the running sweep)
// makes the page fetch its view again. A request that completes, unlike
// an open event stream, lets a page go idle, so a headless browser's
// --virtual-time-budget can screenshot it.
func (s *Server) stateView(*http.Request) (any, error) { return s.state, nil }

// blobCache keeps the tables the pages read in memory: a blob is named by
// its content, so a kept copy never goes stale. It keeps blobs up to
// cacheBlob bytes, cacheTotal in all, and then stops adding.
type blobCache struct {
	artifacts.Store
	mu   sync.Mutex
	kept map[artifacts.Ref][]byte
	size int
}

const (
	cacheBlob  = 4 << 20
	cacheTotal = 256 << 20
)

func (c *blobCache) Get(ctx context.Context, ref artifacts.Ref) ([]byte, error) {
	c.mu.Lock()
	data, ok := c.kept[ref]
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := c.Store.Get(ctx, ref)
	if err == nil && len(data) <= cacheBlob {
		c.mu.Lock()
		if c.size+len(data) <= cacheTotal {
			c.kept[ref] = data
			c.size += len(data)
		}
		c.mu.Unlock()
	}
	return data, err
}
