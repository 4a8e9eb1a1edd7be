// Package composetest holds the end-to-end tests of docker-compose.yml
// (TestCompose) and docker-compose.ha.yml (TestComposeHA). They need a
// Docker engine, compose (v2 plugin or v1.29+ standalone) and the images
// `make images` builds, so they run only when KUBESKY_COMPOSE_TEST=1:
//
//	make test-compose      # images, then TestCompose
//	make test-compose-ha   # images, then TestComposeHA
//
// Each test brings its stack up under its own project name with free host
// ports, checks DNS from the host with a real DNS client, and always runs
// `down -v` at the end (the make targets run it once more, in case the test
// binary itself was killed).
package composetest
