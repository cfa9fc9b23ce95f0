module toll.local/pause

go 1.24.0
