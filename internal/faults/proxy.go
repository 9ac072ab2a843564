package faults

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback port to one upstream
// address, and injects network faults into them: it can stall every
// connection, delay what it forwards, cut the connections it carries
// mid-result, and partition (stall what it carries and refuse new
// connections). One proxy stands between one worker and PostgreSQL, so that
// one worker can be cut off while the others still reach the database.
//
// It is small and written here rather than taken from toxiproxy: the suite
// needs four faults on one link, driven from the test's own goroutine, and
// toxiproxy's library would bring its HTTP API and a dependency tree into a
// module whose point is a lease package that needs neither.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	conns   map[net.Conn]bool
	open    chan struct{} // closed while traffic flows; a stall replaces it
	resume  func()        // closes open
	delay   time.Duration
	refuse  bool
	closed  bool
	pumping sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards to upstream.
func NewProxy(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{ln: ln, upstream: upstream, conns: make(map[net.Conn]bool), open: open, resume: func() {}}
	p.pumping.Go(p.accept)
	return p, nil
}

// Addr returns the address that clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse, upstream := p.refuse || p.closed, p.upstream
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			continue
		}
		p.pumping.Go(func() { p.pump(up, c) })
		p.pumping.Go(func() { p.pump(c, up) })
	}
}

// track records a connection pair, or closes it when the proxy is closed.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.Close()
		b.Close()
		return false
	}
	p.conns[a], p.conns[b] = true, true
	return true
}

// pump copies from src to dst, waiting while the link is stalled and
// delaying each chunk while a delay is set.
func (p *Proxy) pump(dst, src net.Conn) {
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			open, delay := p.open, p.delay
			p.mu.Unlock()
			<-open
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection: the pair is done
		}
	}
}

// Stall holds every byte in both directions until the returned function
// is called; connections stay open.
func (p *Proxy) Stall() (resume func()) {
	gate := make(chan struct{})
	resume = sync.OnceFunc(func() { close(gate) })
	p.mu.Lock()
	p.resume()
	p.open, p.resume = gate, resume
	p.mu.Unlock()
	return resume
}

// Partition stalls the connections the proxy carries and refuses new
// ones until the returned function is called.
func (p *Proxy) Partition() (heal func()) {
	resume := p.Stall()
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
	return sync.OnceFunc(func() {
		p.mu.Lock()
		p.refuse = false
		p.mu.Unlock()
		resume()
	})
}

// Delay delays every chunk forwarded by d until the returned function is
// called.
func (p *Proxy) Delay(d time.Duration) (restore func()) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
	return sync.OnceFunc(func() {
		p.mu.Lock()
		p.delay = 0
		p.mu.Unlock()
	})
}

// Cut closes every connection the proxy carries, wherever it is in a
// result; new connections are accepted as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Redirect sends new connections to upstream from now on, and cuts the
// connections the proxy carries, as a failover manager that moves a
// virtual address to a promoted standby does.
func (p *Proxy) Redirect(upstream string) {
	p.mu.Lock()
	p.upstream = upstream
	p.mu.Unlock()
	p.Cut()
}

// Close stops the proxy and closes every connection it carries.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.resume()
	p.mu.Unlock()
	p.ln.Close()
	p.pumping.Wait()
}
