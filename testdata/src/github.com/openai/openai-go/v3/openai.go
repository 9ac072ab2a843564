// Package openai stands in for the OpenAI SDK.
package openai

// Complete stands in for a chat completion.
func Complete(prompt string) string { return prompt }
