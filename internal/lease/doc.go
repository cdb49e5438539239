// Package lease guards a cluster against two Upshift processes driving
// runs at once, with a coordination.k8s.io Lease and client-go's leader
// election (resourcelock.LeaseLock, ReleaseOnCancel) rather than a
// protocol of our own.
//
// A process takes the lease with Acquire before it writes a run, and gives
// it up with Release when it exits cleanly; the next process then takes it
// at once. A process that dies without releasing (SIGKILL, a lost laptop)
// stops renewing, and the lease expires one duration later, so a second
// process waits about that long and then takes over. While the holder keeps
// renewing, the second one is refused with an error naming the holder:
// user, host, pid and run are encoded in the Lease's holderIdentity.
//
// The holder gives up before anyone else may take over: its renewal
// deadline is the lease duration less one and a half renew periods (a
// renewal round starts one period after the last success, and half a
// period is left as margin). When it gives up, or sees another holder in
// the Lease, Held.Lost closes and Held.Context is cancelled: it must stop
// writing at once. A Fence makes that hold for clients that do not take
// our context (Helm's): opened for a Held, it refuses their writes in the
// HTTP transport once the lease ends.
//
// Holder, which reads the lease without taking it, judges its expiry by the
// API server's clock alone (see Holder); Acquire measures spans on this
// process's clock only. No decision compares two machines' clocks.
//
// client-go's leader election logs through klog; a command that wants a
// quiet terminal silences klog.
package lease
