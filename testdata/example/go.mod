module example.com/shop

go 1.26

require github.com/openai/openai-go/v3 v3.0.0

// A stand-in for the OpenAI SDK, so that the example builds offline.
replace github.com/openai/openai-go/v3 => ./stubs/openai-go
