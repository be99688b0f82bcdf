//go:build !cgo || !linux

package verbs

// Building verbs without cgo (CGO_ENABLED=0, or no C compiler found) or
// for another OS leaves only this file, so that the build fails with one
// line that says what is needed instead of a page of undefined names:
//
//	verbs/nocgo.go:NN:NN: undefined: rdmabench_needs_cgo_on_Linux__build_with_CGO_ENABLED_1_gcc_pkg_config_and_the_libibverbs_librdmacm_dev_packages__see_docs_install_md
//
// (The other files of the package carry "//go:build cgo && linux" or
// import "C".) The packages that compare, plot and report result files
// need no cgo: see docs/install.md.

var _ = rdmabench_needs_cgo_on_Linux__build_with_CGO_ENABLED_1_gcc_pkg_config_and_the_libibverbs_librdmacm_dev_packages__see_docs_install_md
