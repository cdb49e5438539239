// Package nodesready is the `nodesReady` gate: the nodes a label selector
// matches (every node, when the selector is empty) must be Ready — all of
// them, or at least minReady.
//
// The gate watches the nodes with an informer and judges them after the
// first complete list and after every change, so it passes the moment
// enough nodes report Ready. A NotReady node may recover (a kubelet
// restarting, a node rebooting after its upgrade), so the gate waits for
// it and, when the time runs out, names each NotReady node with the reason
// its Ready condition gives. Only a selector that matches nothing on the
// first list fails at once: a typo far more often than nodes to come.
package nodesready
