// Command relay-go is a ceiling of the proxy benchmark on the real control plane
// (test/bench/proxy-real.bench.ts): the least an HTTP relay written in Go does in the proxy's place,
// to tell whether the relay's cost that keeps the proxy under 90% of direct throughput is Node's or
// any relay's on this machine.
//
// Same shape as the bare Node relay (startBareTlsRelay in proxy-bench-relays.ts): TLS towards the
// client on the proxy's certificate, HTTP/2 and HTTP/1.1 by ALPN on one port bound to 127.0.0.1;
// the client's bearer token required and replaced by the admin's upstream; TLS upstream to
// kube-apiserver on a keep-alive transport; bodies copied, nothing parsed. Standard library only.
//
// Its configuration (PEMs and tokens) comes as one JSON object on stdin, so no secret is in its
// argv, its environment or a file. It prints "https://127.0.0.1:PORT" on stdout once it listens and
// exits when stdin closes, so it cannot outlive the bench that started it.
package main

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

type config struct {
	// Upstream is kube-apiserver's URL (https), UpstreamCaPem the CA it is verified with.
	Upstream      string `json:"upstream"`
	UpstreamCaPem string `json:"upstreamCaPem"`
	// UpstreamToken is the admin's bearer token, sent upstream in place of the client's.
	UpstreamToken string `json:"upstreamToken"`
	// UpstreamProtocol is "h2" (one HTTP/2 connection, streams multiplexed, as client-go talks) or
	// "http/1.1" (a keep-alive connection per request in flight, as the proxy's upstream).
	UpstreamProtocol string `json:"upstreamProtocol"`
	// ClientToken is the bearer token a client must present.
	ClientToken string `json:"clientToken"`
	// CertPem and KeyPem are the certificate and key served to clients (the proxy's).
	CertPem string `json:"certPem"`
	KeyPem  string `json:"keyPem"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "relay-go: %v\n", err)
		os.Exit(2)
	}
}

func run() error {
	var c config
	dec := json.NewDecoder(os.Stdin)
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("stdin: expected one JSON object with the relay's configuration: %w", err)
	}
	upstream, err := url.Parse(c.Upstream)
	if err != nil || upstream.Scheme != "https" {
		return fmt.Errorf("stdin: upstream: expected an https:// URL, got %q", c.Upstream)
	}
	if c.ClientToken == "" || c.UpstreamToken == "" {
		return fmt.Errorf("stdin: clientToken and upstreamToken: expected non-empty tokens")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(c.UpstreamCaPem)) {
		return fmt.Errorf("stdin: upstreamCaPem: expected a PEM certificate")
	}
	cert, err := tls.X509KeyPair([]byte(c.CertPem), []byte(c.KeyPem))
	if err != nil {
		return fmt.Errorf("stdin: certPem/keyPem: %w", err)
	}

	transport := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		// Set explicitly: with a TLSClientConfig of its own, a Transport speaks HTTP/1.1 unless told.
		ForceAttemptHTTP2: c.UpstreamProtocol == "h2",
		// Enough idle connections for every request in flight (32 GETs, 100 watches) to find one.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		// A relay passes bodies through: no Accept-Encoding of its own, no transparent gunzip.
		DisableCompression: true,
		DialContext:        (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	quiet := log.New(io.Discard, "", 0)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Host = upstream.Host
			r.Out.Header.Set("Authorization", "Bearer "+c.UpstreamToken)
		},
		Transport: transport,
		// Streamed answers (watches, no Content-Length) are flushed at each write by ReverseProxy
		// itself; other answers leave when the handler returns.
		FlushInterval: 0,
		// A watcher that goes away cancels its upstream request; that is no error worth a line.
		ErrorLog: quiet,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				w.WriteHeader(http.StatusBadGateway)
			}
		},
	}
	want := []byte("Bearer " + c.ClientToken)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "relay-go: a bearer token is required", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	})

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	server := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          quiet,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			NextProtos:   []string{"h2", "http/1.1"},
		},
	}
	fmt.Printf("https://%s\n", listener.Addr().String())
	served := make(chan error, 1)
	go func() { served <- server.ServeTLS(listener, "", "") }()
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, dec.Buffered())
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case err := <-served:
		return err
	case <-stdinClosed:
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
		return nil
	}
}
