package verbs

// How verbs links rdma-core: flags come from pkg-config (libibverbs.pc and
// librdmacm.pc, shipped by Debian's libibverbs-dev and librdmacm-dev and by
// Fedora's rdma-core-devel), so an rdma-core installed outside /usr builds
// with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig. cgo flags apply to the whole
// package: the other cgo files name only their own extra flags.

/*
#cgo pkg-config: libibverbs librdmacm
*/
import "C"
