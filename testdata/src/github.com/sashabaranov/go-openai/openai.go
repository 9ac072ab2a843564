// Package openai stands in for sashabaranov/go-openai.
package openai

// Client stands in for its client.
type Client struct{}
