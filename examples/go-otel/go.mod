module toll.example/go-otel

go 1.22
