package faults_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/internal/faults"
)

// echo starts a loopback server that echoes lines back, and a proxy to it.
func echo(t *testing.T) *faults.Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	p, err := faults.NewProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// roundTrip sends a line through c and reads it back within wait.
func roundTrip(c net.Conn, wait time.Duration) error {
	return roundTrips(c, wait, 1)
}

// roundTrips sends a line through c and reads n lines back within wait:
// the echo of the line and of n-1 lines sent before it and not yet read.
// Each echo is read, so that none is left in c's buffers for a later
// check to mistake for traffic.
func roundTrips(c net.Conn, wait time.Duration, n int) error {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	for range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "ping\n" {
			return errors.New("echoed " + line)
		}
	}
	return nil
}

func TestProxy(t *testing.T) {
	t.Parallel()
	p := echo(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, 5*time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	resume := p.Stall()
	var timeout net.Error
	if err := roundTrip(c, 200*time.Millisecond); !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Fatalf("stalled: %v, want a timeout", err)
	}
	resume()
	// The stalled ping arrives now, then a new one goes through.
	if err := roundTrips(c, 5*time.Second, 2); err != nil {
		t.Fatalf("after resume: %v", err)
	}

	p.Cut()
	if err := roundTrip(c, 5*time.Second); err == nil {
		t.Fatal("a cut connection still carries traffic")
	}

	heal := p.Partition()
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if err := roundTrip(c2, 500*time.Millisecond); err == nil {
			t.Fatal("a partitioned proxy carried a new connection")
		}
		c2.Close()
	}
	heal()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := roundTrip(c3, 5*time.Second); err != nil {
		t.Fatalf("after healing: %v", err)
	}
}
