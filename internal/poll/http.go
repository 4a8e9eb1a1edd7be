package poll

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HTTPOK returns nil when url, asked through client, answers 200, and
// otherwise an error with the status and the start of the body: the
// readiness check the tools poll with Until.
func HTTPOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
