package imports

import (
	"strconv"
	"strings"
)

// kind is what a banned package is, for the message.
type kind string

const (
	modelSDK   kind = "model SDK"
	httpClient kind = "HTTP client"
	rpcClient  kind = "RPC client"
	wsClient   kind = "websocket client"
	banned     kind = "banned package" // from -imports.ban
)

// why says, per kind, why the finding matters.
func (k kind) why() string {
	if k == modelSDK {
		return "a vendor in the write path can veto leadership"
	}
	return "a network call in the write path can veto leadership"
}

// ban is one entry of the ban list: a package path prefix.
type ban struct {
	prefix string
	kind   kind
	// onUse: the package counts only where a package on the chain (for a
	// direct import, the lease package itself) uses its client API, or in
	// strict mode: net/http and grpc are everywhere, mostly for handlers,
	// types and status codes, and websocket libraries and http2 serve as
	// well as dial.
	onUse bool
}

// curated is the default ban list, matched by path prefix with major-version
// suffixes ignored. docs/rules/imports.md documents each entry
// (TestBanListDocumented keeps the two in step).
var curated = []ban{
	{"net/http", httpClient, true},
	{"golang.org/x/net/http2", httpClient, true},
	{"github.com/go-resty/resty", httpClient, false},
	{"resty.dev", httpClient, false},
	{"github.com/hashicorp/go-retryablehttp", httpClient, false},
	{"github.com/valyala/fasthttp", httpClient, false},
	{"github.com/imroc/req", httpClient, false},
	{"google.golang.org/grpc", rpcClient, true},
	{"github.com/gorilla/websocket", wsClient, true},
	{"github.com/coder/websocket", wsClient, true},
	{"nhooyr.io/websocket", wsClient, true},
	{"golang.org/x/net/websocket", wsClient, true},
	{"github.com/openai/openai-go", modelSDK, false},
	{"github.com/sashabaranov/go-openai", modelSDK, false},
	{"github.com/anthropics/anthropic-sdk-go", modelSDK, false},
	{"google.golang.org/genai", modelSDK, false},
	{"github.com/google/generative-ai-go", modelSDK, false},
	{"cloud.google.com/go/vertexai", modelSDK, false},
	{"cloud.google.com/go/aiplatform", modelSDK, false},
	{"github.com/aws/aws-sdk-go-v2/service/bedrockruntime", modelSDK, false},
	{"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime", modelSDK, false},
	{"github.com/aws/aws-sdk-go/service/bedrockruntime", modelSDK, false},
	{"github.com/aws/aws-sdk-go/service/bedrockagentruntime", modelSDK, false},
	{"github.com/Azure/azure-sdk-for-go/sdk/ai/azopenai", modelSDK, false},
	{"github.com/tmc/langchaingo", modelSDK, false},
	{"github.com/ollama/ollama/api", modelSDK, false},
	{"github.com/cohere-ai/cohere-go", modelSDK, false},
	{"github.com/gage-technologies/mistral-go", modelSDK, false},
	{"github.com/replicate/replicate-go", modelSDK, false},
	{"github.com/hupe1980/go-huggingface", modelSDK, false},
	{"github.com/Kardbord/hfapigo", modelSDK, false},
}

// normalize drops major-version path elements (v2, v3, ...) after the
// first, so that github.com/openai/openai-go/v3/option matches the prefix
// github.com/openai/openai-go, and so would a future /v4.
func normalize(path string) string {
	if !strings.Contains(path, "/v") {
		return path // the common case, without allocating
	}
	elems := strings.Split(path, "/")
	out := elems[:1]
	for _, e := range elems[1:] {
		if n, err := strconv.Atoi(strings.TrimPrefix(e, "v")); err == nil && e[0] == 'v' && n >= 2 {
			continue
		}
		out = append(out, e)
	}
	return strings.Join(out, "/")
}

// banList matches package paths against the curated list and extra prefixes.
type banList []ban

func newBanList(extra []string) banList {
	list := append(banList(nil), curated...)
	for _, p := range extra {
		list = append(list, ban{prefix: normalize(p), kind: banned})
	}
	return list
}

// match returns the entry that bans path, or nil.
func (l banList) match(path string) *ban {
	n := normalize(path)
	for i := range l {
		p := l[i].prefix
		if n == p || strings.HasPrefix(n, p+"/") {
			return &l[i]
		}
	}
	return nil
}
