module example.com/pc

go 1.26

require github.com/openai/openai-go/v3 v3.0.0

replace github.com/openai/openai-go/v3 => ./stubs/openai-go
