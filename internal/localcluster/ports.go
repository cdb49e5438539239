package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// ErrPortInUse is returned when a requested port is taken.
var ErrPortInUse = errors.New("port in use")

// Ports are the loopback ports one cluster listens on.
type Ports struct {
	APIServer         int `json:"apiServer"`
	EtcdClient        int `json:"etcdClient"`
	EtcdPeer          int `json:"etcdPeer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
}

// choosePorts is allocatePorts; a test replaces it to hand a start a port
// another process holds.
var choosePorts = allocatePorts

// allocatePorts picks free loopback ports, honouring a requested API server
// port. All listeners are held open until every port is chosen, so the
// ports are distinct.
//
// The ports are chosen below the kernel's ephemeral range, not by asking
// for port 0. The kernel hands ports of that range to every outgoing
// connection, the API server's many connections to etcd among them, and a
// component's later bind fails when a connection made in between holds its
// port as a source port. Below the range only another listener can take
// it; Start retries with fresh ports when one did.
func allocatePorts(apiServerPort int) (Ports, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	low, high := listenRange()
	pick := func(want int) (int, error) {
		if want != 0 {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(want))
			if err != nil {
				return 0, fmt.Errorf("%w: 127.0.0.1:%d is already taken by another process: choose a free one with --port, or stop what listens there", ErrPortInUse, want)
			}
			listeners = append(listeners, l)
			return want, nil
		}
		for range 100 {
			port := low + rand.IntN(high-low)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				listeners = append(listeners, l)
				return port, nil
			}
		}
		// A range this full is unusual; the kernel's choice is the fallback.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	var p Ports
	var err error
	for _, f := range []struct {
		dst  *int
		want int
	}{
		{&p.APIServer, apiServerPort}, {&p.EtcdClient, 0}, {&p.EtcdPeer, 0},
		{&p.ControllerManager, 0}, {&p.Scheduler, 0}, {&p.Kwok, 0},
	} {
		if *f.dst, err = pick(f.want); err != nil {
			return Ports{}, err
		}
	}
	return p, nil
}

// listenRange is the range ports are picked from: from 10000 to the start
// of the kernel's ephemeral range (32768 on Linux by default), or a range
// above 10000 when the ephemeral range cannot be read or leaves too little
// room below it.
func listenRange() (low, high int) {
	const floor, minWidth = 10000, 2000
	low, high = floor, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return low, high
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return low, high
	}
	ephemeralLow, err := strconv.Atoi(fields[0])
	if err != nil || ephemeralLow-floor < minWidth {
		return low, high
	}
	return floor, ephemeralLow
}
