// Debian's libldap2-dev (OpenLDAP's client library) for the `ldap` plugin.
#include <ldap.h>
