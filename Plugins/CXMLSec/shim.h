// Debian's libxmlsec1-dev (xmlsec1 with its OpenSSL back end, on libxml2) for the `saml` plugin: XML
// signatures and encryption by a maintained library rather than by hand. The defines xmlsec's headers
// need are `pkg-config --cflags xmlsec1-openssl`'s, written here because SwiftPM passes only a
// system library's -I flags on (it prohibits -D). They must match how Debian built the library.
#ifndef XMLSEC_CRYPTO_OPENSSL
#define XMLSEC_CRYPTO_OPENSSL 1
#endif
#ifndef XMLSEC_NO_SIZE_T
#define XMLSEC_NO_SIZE_T
#endif
#ifndef XMLSEC_OPENSSL3_ENGINES
#define XMLSEC_OPENSSL3_ENGINES 1
#endif
#ifndef XMLSEC_NO_GOST
#define XMLSEC_NO_GOST 1
#endif
#ifndef XMLSEC_NO_GOST2012
#define XMLSEC_NO_GOST2012 1
#endif
#ifndef XMLSEC_NO_CRYPTO_DYNAMIC_LOADING
#define XMLSEC_NO_CRYPTO_DYNAMIC_LOADING 1
#endif
#ifndef __XMLSEC_FUNCTION__
#define __XMLSEC_FUNCTION__ __func__
#endif
// libxml2 is built with ICU here, and its encoding header would pull in the system's ICU headers,
// which clash with the ICU inside Foundation. Nothing here uses ICU: its one use, two pointers at the
// end of xmlCharEncodingHandler (a struct this module never reads or sizes), is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlenc.h>
#include <xmlsec/templates.h>
#include <xmlsec/keys.h>
#include <xmlsec/keysmngr.h>
#include <xmlsec/transforms.h>
#include <xmlsec/errors.h>
#include <xmlsec/crypto.h>
#include <xmlsec/openssl/app.h>
#include <xmlsec/openssl/crypto.h>

// xmlsec's error callback takes C varargs-free arguments, but libxml2's generic error handler is
// variadic, which Swift cannot implement: a C function that swallows libxml2's messages.
static inline void gatehouse_xml_silence(void *ctx, const char *msg, ...) { (void)ctx; (void)msg; }
// libxml2's error handler is per thread: the thread default covers threads that use libxml2 later.
static inline void gatehouse_xml_install_silence(void) {
    xmlThrDefSetGenericErrorFunc(NULL, gatehouse_xml_silence);
    xmlSetGenericErrorFunc(NULL, gatehouse_xml_silence);
}
// libxml2's xmlFree is a global function pointer, which Swift sees as shared mutable state.
static inline void gatehouse_xml_free(void *pointer) { xmlFree(pointer); }
