package authz

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// Attributer turns requests into what authorizers decide on, as
// kube-apiserver's WithRequestInfo and GetAuthorizerAttributes filters do
// (k8s.io/apiserver/pkg/endpoints/filters), with its RequestInfoFactory:
// the same verbs (watch, deletecollection, list with a metadata.name field
// selector naming the object), subresources, and non-resource paths.
type Attributer struct {
	factory *request.RequestInfoFactory
}

// NewAttributer returns an Attributer for /api and /apis.
func NewAttributer() *Attributer {
	return &Attributer{factory: &request.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	}}
}

// Attributes are what authorizers see of r, made by u.
func (a *Attributer) Attributes(r *http.Request, u authn.User) (*authorizer.AttributesRecord, error) {
	info, err := a.factory.NewRequestInfo(r)
	if err != nil {
		return nil, fmt.Errorf("request info: %w", err)
	}
	attrs := &authorizer.AttributesRecord{
		User:            UserInfo(u),
		ResourceRequest: info.IsResourceRequest,
		Path:            info.Path,
		Verb:            info.Verb,
		APIGroup:        info.APIGroup,
		APIVersion:      info.APIVersion,
		Resource:        info.Resource,
		Subresource:     info.Subresource,
		Namespace:       info.Namespace,
		Name:            info.Name,
	}
	// Selectors are parsed here, as upstream does, so that the Node
	// authorizer can allow a node to list the pods of spec.nodeName=<itself>
	// (KEP-4601); a selector that does not parse is an error the
	// authorizers see, not a failed request.
	if info.FieldSelector != "" {
		if s, err := fields.ParseSelector(info.FieldSelector); err != nil {
			attrs.FieldSelectorParsingErr = err
		} else if req := s.Requirements(); len(req) > 0 {
			attrs.FieldSelectorRequirements = req
		}
	}
	if info.LabelSelector != "" {
		if s, err := labels.Parse(info.LabelSelector); err != nil {
			attrs.LabelSelectorParsingErr = err
		} else if req, _ := s.Requirements(); len(req) > 0 {
			attrs.LabelSelectorRequirements = req
		}
	}
	return attrs, nil
}

// UserInfo is u as k8s.io/apiserver's authorizers take it.
func UserInfo(u authn.User) user.Info {
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// ImpersonationAttributes are the attributes of actor impersonating what
// r names: verb "impersonate" on users, groups, serviceaccounts (in their
// namespace), uids or userextras/<key> (authentication.k8s.io), as
// kube-apiserver's impersonation filter asks its authorizer.
func ImpersonationAttributes(actor authn.User, r authn.ImpersonationRequest) *authorizer.AttributesRecord {
	attrs := &authorizer.AttributesRecord{
		User:            UserInfo(actor),
		Verb:            "impersonate",
		Resource:        r.Resource,
		Namespace:       r.Namespace,
		Name:            r.Name,
		ResourceRequest: true,
	}
	switch r.Resource {
	case "uids", "userextras":
		attrs.APIGroup = "authentication.k8s.io"
	}
	if r.Resource == "userextras" {
		attrs.Subresource = r.ExtraKey
	}
	return attrs
}

// errNoUser is a wiring bug: authorization runs after authentication.
var errNoUser = errors.New("no user found for request")
