package plugin

import (
	"errors"
	"sync"
)

// Pool keeps one connection per endpoint (address, TLS material and
// Insecure), so reconciles of many clusters behind one plugin share it
// (the multicluster operator dialled for every call). A connection left
// unused goes idle by itself (its transport is closed, and opened again
// on the next call); Close closes them all.
type Pool struct {
	opts    Options
	mu      sync.Mutex
	clients map[string]*Client
	closed  bool
}

// NewPool is a pool whose clients use opts.
func NewPool(opts Options) *Pool {
	return &Pool{opts: opts, clients: map[string]*Client{}}
}

// Client is the pool's client of ep, made on first use. Do not Close it:
// the Pool does.
func (p *Pool) Client(ep Endpoint) (*Client, error) {
	key := ep.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("plugin pool closed")
	}
	if c, ok := p.clients[key]; ok {
		return c, nil
	}
	c, err := Dial(ep, p.opts)
	if err != nil {
		return nil, err
	}
	c.pooled = true
	p.clients[key] = c
	return c, nil
}

// Close closes every connection; the pool then refuses new clients.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for key, c := range p.clients {
		errs = append(errs, c.conn.Close())
		delete(p.clients, key)
	}
	return errors.Join(errs...)
}
