package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/ump-lab/ump/dashboard"
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a live, read-only dashboard of the store's sweeps: progress, tables, curves, cells, exports",
		Description: "Opens nothing for writing and holds no lock: runs, pulls and gc work beside it, and the\n" +
			"page follows them as they record events. It listens on 127.0.0.1 unless --addr names\n" +
			"another address; then every request needs the token printed at start (the printed\n" +
			"address carries it). Ctrl-C stops it.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:  "addr",
				Value: "127.0.0.1:8080",
				Usage: "`HOST:PORT` to listen on (port 0: any free port)",
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return badInput{
					fmt.Errorf(
						"serve takes no arguments (got %q); it serves every manifest of --store",
						c.Args().Slice(),
					),
				}
			}
			return runServe(c.Context, globalsOf(c), c.String("addr"), c.App.Writer)
		},
	}
}

func runServe(ctx context.Context, g globals, addr string, w io.Writer) error {
	if err := g.storeThere(); err != nil {
		return err
	}
	o := dashboard.Options{Dir: g.store}
	if !dashboard.IsLoopback(addr) {
		key := make([]byte, 16)
		rand.Read(key)
		o.Token = hex.EncodeToString(key)
	}
	if g.artifacts != "" {
		s3, err := g.s3(ctx)
		if err != nil {
			return err
		}
		o.Blobs = s3
	}
	srv, err := dashboard.New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return badInput{fmt.Errorf("--addr %s: %w; choose another HOST:PORT", addr, err)}
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host, _ = os.Hostname()
	}
	url := "http://" + net.JoinHostPort(host, port) + "/"
	if o.Token != "" {
		url += "?token=" + o.Token
	}
	fmt.Fprintf(w, "serving %s\n", url)
	fmt.Fprintf(w, "store %s, read-only; Ctrl-C stops\n", g.store)
	return srv.Serve(ctx, ln)
}
