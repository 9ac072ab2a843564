module example.com/aim

go 1.26
