package kubetest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
)

// nfacctCounters are the extended accounting objects kube-proxy creates
// for its metrics (k8s.io/kubernetes/pkg/proxy/metrics); they outlive it,
// so down deletes the ones the node created.
var nfacctCounters = []string{"ct_state_invalid_dropped_pkts", "localhost_nps_accepted_pkts"}

// nfnetlink_acct message types (linux/netfilter/nfnetlink_acct.h).
const (
	nfnlSubsysAcct = 7
	nfnlMsgAcctGet = 1
	nfnlMsgAcctDel = 2
	nfacctAttrName = 1
)

// nfacctExists reports whether the accounting object name exists.
func nfacctExists(name string) (bool, error) {
	err := nfacctRequest(nfnlMsgAcctGet, name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.ENOENT):
		return false, nil
	default:
		return false, err
	}
}

// nfacctDelete deletes the accounting object name; a missing one is fine.
func nfacctDelete(name string) error {
	err := nfacctRequest(nfnlMsgAcctDel, name)
	if err == nil || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EPROTONOSUPPORT) {
		return nil
	}
	return fmt.Errorf("deleting nfacct object %s: %w", name, err)
}

// nfacctRequest sends one nfnetlink_acct request about name and returns the
// kernel's answer as an errno (nil for success).
func nfacctRequest(msgType uint16, name string) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_NETFILTER)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	// nlmsghdr (16) + nfgenmsg (4) + one attribute: the NUL-terminated
	// name, padded to 4 bytes.
	attrLen := 4 + len(name) + 1
	msgLen := 16 + 4 + (attrLen+3)&^3
	b := make([]byte, msgLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(msgLen))
	ne.PutUint16(b[4:], nfnlSubsysAcct<<8|msgType)
	ne.PutUint16(b[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_ACK)
	ne.PutUint32(b[8:], 1) // sequence number
	b[16] = syscall.AF_UNSPEC
	b[17] = 0 // NFNETLINK_V0
	ne.PutUint16(b[20:], uint16(attrLen))
	ne.PutUint16(b[22:], nfacctAttrName)
	copy(b[24:], name)
	if err := syscall.Sendto(fd, b, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	for {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Type != syscall.NLMSG_ERROR {
				continue // a GET's answer precedes its acknowledgement
			}
			if len(m.Data) < 4 {
				return errors.New("short netlink error message")
			}
			if errno := -int32(ne.Uint32(m.Data[:4])); errno != 0 {
				return syscall.Errno(errno)
			}
			return nil
		}
	}
}
