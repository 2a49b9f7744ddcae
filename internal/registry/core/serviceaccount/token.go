package serviceaccount

import (
	"context"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/authentication"
	authenticationinternalv1 "k8s.io/kubernetes/pkg/apis/authentication/v1"
	authenticationvalidation "k8s.io/kubernetes/pkg/apis/authentication/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/serviceaccount"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

var (
	tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	serviceAccounts  = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	pods             = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	secrets          = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nodes            = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// token is serviceaccounts/token.
func token(t Tokens) rest.Subresource {
	now := t.Now
	if now == nil {
		now = time.Now
	}
	return rest.Subresource{
		Name:     "token",
		Kind:     tokenRequestKind,
		Verbs:    []string{"create"},
		New:      func() any { return &authenticationv1.TokenRequest{} },
		Document: rest.DocumentCreate,
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			out, err := issue(ctx, objs, t, req.Namespace, req.Name, req.Body.(*authenticationv1.TokenRequest), now())
			if err != nil {
				return rest.Response{}, err
			}
			return rest.Response{Code: http.StatusCreated, Object: out}, nil
		},
	}
}

// issue answers a TokenRequest for the service account namespace/name in
// the order and words of upstream's TokenREST.Create. The webhook
// configuration bindings are not served (dnsplane has no admission
// webhooks), nor the extended expiration of kubelet-projected tokens
// (there is no kubelet).
func issue(ctx context.Context, objs rest.Objects, t Tokens, namespace, name string, tr *authenticationv1.TokenRequest, now time.Time) (*authenticationv1.TokenRequest, error) {
	if tr.Name != "" && tr.Name != name {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("name"), tr.Name, "must match the service account name if specified")})
	}
	obj, err := objs.Get(ctx, serviceAccounts, namespace, name)
	if err != nil {
		return nil, err
	}
	sa := obj.(*corev1.ServiceAccount)
	if tr.UID != "" && tr.UID != sa.UID {
		// TokenRequestServiceAccountUIDValidation, on by default since 1.34.
		return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", tr.UID, sa.UID))
	}
	tr = tr.DeepCopy()
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = t.Audiences
	}
	tr.Name, tr.Namespace, tr.UID = sa.Name, sa.Namespace, sa.UID
	tr.CreationTimestamp = metav1.NewTime(now)
	tr.Status = authenticationv1.TokenRequestStatus{}
	if tr.Spec.ExpirationSeconds == nil {
		// The v1 default (SetDefaults_TokenRequestSpec): one hour.
		one := int64(60 * 60)
		tr.Spec.ExpirationSeconds = &one
	}
	var internal authentication.TokenRequest
	if err := authenticationinternalv1.Convert_v1_TokenRequest_To_authentication_TokenRequest(tr, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting the TokenRequest: %w", err)
	}
	if errs := authenticationvalidation.ValidateTokenRequest(&internal); len(errs) != 0 {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), "", errs)
	}

	var pod, secret, node *meta
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		var uid types.UID
		switch {
		case gvk.Group == "" && gvk.Kind == "Pod":
			obj, err := objs.Get(ctx, pods, namespace, ref.Name)
			if err != nil {
				return nil, err
			}
			p := obj.(*dpcorev1.Pod)
			if name != p.Spec.ServiceAccountName {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", name))
			}
			pod, uid = &meta{p.Name, p.UID}, p.UID
			if n := p.Spec.NodeName; n != "" {
				// The node the pod runs on goes into the claims too
				// (ServiceAccountTokenPodNodeInfo); a node that is not
				// registered is named without a UID, as upstream.
				node = &meta{name: n}
				switch obj, err := objs.Get(ctx, nodes, "", n); {
				case err == nil:
					node.uid = obj.(*corev1.Node).UID
				case !apierrors.IsNotFound(err):
					return nil, apierrors.NewInternalError(err)
				}
			}
		case gvk.Group == "" && gvk.Kind == "Node":
			obj, err := objs.Get(ctx, nodes, "", ref.Name)
			if err != nil {
				return nil, err
			}
			n := obj.(*corev1.Node)
			node, uid = &meta{n.Name, n.UID}, n.UID
		case gvk.Group == "" && gvk.Kind == "Secret":
			obj, err := objs.Get(ctx, secrets, namespace, ref.Name)
			if err != nil {
				return nil, err
			}
			s := obj.(*corev1.Secret)
			secret, uid = &meta{s.Name, s.UID}, s.UID
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
		}
		if ref.UID != "" && uid != ref.UID {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
		}
	}

	exp := *tr.Spec.ExpirationSeconds
	account := core.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name, Namespace: sa.Namespace, UID: sa.UID}}
	public, private, err := serviceaccount.Claims(account, pod.pod(), secret.secret(), node.node(), nil, nil, exp, 0, tr.Spec.Audiences, nil)
	if err != nil {
		return nil, err
	}
	signed, err := t.Generator.GenerateToken(ctx, public, private)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	tr.TypeMeta = metav1.TypeMeta{APIVersion: tokenRequestKind.GroupVersion().String(), Kind: tokenRequestKind.Kind}
	tr.Status = authenticationv1.TokenRequestStatus{
		Token:               signed,
		ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(exp) * time.Second)),
	}
	return tr, nil
}

// meta is what the claims keep of a bound object: its name and UID
// (serviceaccount.Claims reads nothing else of upstream's internal types).
type meta struct {
	name string
	uid  types.UID
}

func (m *meta) objectMeta() metav1.ObjectMeta { return metav1.ObjectMeta{Name: m.name, UID: m.uid} }

func (m *meta) pod() *core.Pod {
	if m == nil {
		return nil
	}
	return &core.Pod{ObjectMeta: m.objectMeta()}
}

func (m *meta) secret() *core.Secret {
	if m == nil {
		return nil
	}
	return &core.Secret{ObjectMeta: m.objectMeta()}
}

func (m *meta) node() *core.Node {
	if m == nil {
		return nil
	}
	return &core.Node{ObjectMeta: m.objectMeta()}
}
