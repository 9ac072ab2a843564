module example.com/fast

go 1.24
