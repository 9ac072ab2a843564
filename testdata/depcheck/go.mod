module example.com/dc

go 1.26
