package localcluster

import (
	"errors"
	"fmt"
	"net"
	"strconv"
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

// allocatePorts picks free loopback ports, honouring a requested API server
// port. All listeners are held open until every port is chosen, so the
// ports are distinct.
func allocatePorts(apiServerPort int) (Ports, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	pick := func(want int) (int, error) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(want))
		if err != nil {
			if want != 0 {
				return 0, fmt.Errorf("%w: 127.0.0.1:%d is already taken by another process: choose a free one with --port, or stop what listens there", ErrPortInUse, want)
			}
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
