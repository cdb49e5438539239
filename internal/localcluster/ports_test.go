package localcluster_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// The ports a cluster listens on are chosen below the kernel's ephemeral
// range, where no outgoing connection can take one as its source port
// between choosing and binding it, and are distinct.
func TestPortsAreChosenBelowTheEphemeralRange(t *testing.T) {
	low, high := localcluster.ListenRange()
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if ephemeralLow, err := strconv.Atoi(strings.Fields(string(b))[0]); err == nil && ephemeralLow-low >= 2000 && high != ephemeralLow {
			t.Errorf("ports are chosen from [%d, %d), want up to the ephemeral range's start %d", low, high, ephemeralLow)
		}
	}
	for range 20 {
		p, err := localcluster.AllocatePorts(0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, port := range []int{p.APIServer, p.EtcdClient, p.EtcdPeer, p.ControllerManager, p.Scheduler, p.Kwok} {
			if port < low || port >= high {
				t.Fatalf("port %d of %+v is outside [%d, %d)", port, p, low, high)
			}
			if seen[port] {
				t.Fatalf("port %d chosen twice: %+v", port, p)
			}
			seen[port] = true
		}
	}
}

// A component that cannot bind the port chosen for it, because another
// process took it in between, does not fail the start: the cluster starts
// again on other ports, for the scheduler too, which no later step of the
// start depends on.
func TestStartOverATakenPortStartsAgainOnOtherPorts(t *testing.T) {
	for _, tt := range []struct {
		component string
		port      func(*localcluster.Ports) *int
	}{
		{"kube-controller-manager", func(p *localcluster.Ports) *int { return &p.ControllerManager }},
		{"kube-scheduler", func(p *localcluster.Ports) *int { return &p.Scheduler }},
	} {
		t.Run(tt.component, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			takenPort := taken.Addr().(*net.TCPAddr).Port
			var mu sync.Mutex
			calls := 0
			defer localcluster.SetChoosePorts(func(apiServerPort int) (localcluster.Ports, error) {
				p, err := localcluster.AllocatePorts(apiServerPort)
				mu.Lock()
				defer mu.Unlock()
				if calls++; calls == 1 {
					*tt.port(&p) = takenPort // as if taken after it was chosen
				}
				return p, err
			})()
			c := startTied(t, "taken")
			if calls != 2 {
				t.Errorf("ports chosen %d times, want 2: once, then again after the taken one", calls)
			}
			if *tt.port(&c.Ports) == takenPort {
				t.Errorf("the cluster records the taken port %d for %s", takenPort, tt.component)
			}
			if len(c.Running()) != 5 {
				t.Errorf("%d of 5 processes running after the second start: %+v", len(c.Running()), c.Processes)
			}
		})
	}
}
