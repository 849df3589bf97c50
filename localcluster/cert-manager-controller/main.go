// The cert-manager controller for etcd-conductor's local stack: upstream's cmd/controller, which the Go
// module proxy does not publish, reduced to one process with leader election, profiler and metrics TLS off.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	logsapi "k8s.io/component-base/logs/api/v1"

	config "github.com/cert-manager/cert-manager/internal/apis/config/controller"
	configscheme "github.com/cert-manager/cert-manager/internal/apis/config/controller/scheme"
	defaults "github.com/cert-manager/cert-manager/internal/apis/config/controller/v1alpha1"
	"github.com/cert-manager/cert-manager/internal/apis/config/controller/validation"
	"github.com/cert-manager/cert-manager/internal/cmd/util"
	"github.com/cert-manager/cert-manager/internal/pem"
	configv1alpha1 "github.com/cert-manager/cert-manager/pkg/apis/config/controller/v1alpha1"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/healthz"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/server"

	// The same controller and issuer registrations as upstream's cmd/controller/app/start.go.
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/vault"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/venafi"
)

func main() {
	ctx, exit := util.SetupExitHandler(context.Background(), util.GracefulShutdown)
	defer exit() // may call os.Exit, so deferred first

	logf.InitLogs()
	defer logf.FlushLogs()
	ctx = logf.NewContext(ctx, logf.Log, "controller")

	if err := run(ctx, os.Args[1:]); err != nil {
		logf.Log.Error(err, "cert-manager controller failed")
		util.SetExitCode(err)
	}
}

func run(rootCtx context.Context, args []string) error {
	cfg, err := defaultConfig()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("cert-manager-controller", flag.ContinueOnError)
	fs.StringVar(&cfg.KubeConfig, "kubeconfig", cfg.KubeConfig, "path to a kubeconfig")
	fs.StringVar(&cfg.ClusterResourceNamespace, "cluster-resource-namespace", cfg.ClusterResourceNamespace, "namespace of the Secrets that ClusterIssuers refer to")
	fs.StringVar(&cfg.MetricsListenAddress, "metrics-listen-address", "127.0.0.1:9402", "host:port of the Prometheus metrics endpoint")
	fs.StringVar(&cfg.HealthzListenAddress, "healthz-listen-address", "127.0.0.1:9403", "host:port of the /livez endpoint")
	verbosity := fs.Uint("v", 2, "log verbosity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Logging.Verbosity = logsapi.VerbosityLevel(*verbosity)
	// One process on one machine: there is nobody to elect against.
	cfg.LeaderElectionConfig.Enabled = false
	if errs := validation.ValidateControllerConfiguration(cfg, nil); len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %w", errs.ToAggregate())
	}
	if err := logf.ValidateAndApply(&cfg.Logging); err != nil {
		return err
	}
	pem.SetGlobalSizeLimits(pem.NewSizeLimitsFromConfig(
		cfg.PEMSizeLimitsConfig.MaxCertificateSize, cfg.PEMSizeLimitsConfig.MaxPrivateKeySize,
		cfg.PEMSizeLimitsConfig.MaxChainLength, cfg.PEMSizeLimitsConfig.MaxBundleSize))

	rootCtx, cancel := context.WithCancel(rootCtx)
	defer cancel()
	log := logf.FromContext(rootCtx)
	g, rootCtx := errgroup.WithContext(rootCtx)

	factory, err := contextFactory(rootCtx, cfg)
	if err != nil {
		return err
	}
	cctx, err := factory.Build()
	if err != nil {
		return err
	}

	metricsLn, err := server.Listen(rootCtx, "tcp", cfg.MetricsListenAddress)
	if err != nil {
		return fmt.Errorf("listening on metrics address %s: %w", cfg.MetricsListenAddress, err)
	}
	cctx.Metrics.SetupCertificateCollector(cctx.SharedInformerFactory.Certmanager().V1().Certificates().Lister())
	cctx.Metrics.SetupIssuerCollector(cctx.SharedInformerFactory.Certmanager().V1().Issuers().Lister())
	metricsServer := cctx.Metrics.NewServer(metricsLn)
	g.Go(func() error {
		<-rootCtx.Done()
		shutdownCtx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		return metricsServer.Shutdown(shutdownCtx)
	})
	g.Go(func() error {
		if err := metricsServer.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})

	lc := net.ListenConfig{}
	healthzLn, err := lc.Listen(rootCtx, "tcp", cfg.HealthzListenAddress)
	if err != nil {
		return fmt.Errorf("listening on healthz address %s: %w", cfg.HealthzListenAddress, err)
	}
	healthzServer := healthz.NewServer(cfg.LeaderElectionConfig.HealthzTimeout)
	g.Go(func() error { return healthzServer.Start(rootCtx, healthzLn) })

	enabled := sets.New(defaults.DefaultEnabledControllers...)
	log.Info("starting cert-manager controller", "controllers", sets.List(enabled))
	for name, construct := range controller.Known() {
		if !enabled.Has(name) {
			continue
		}
		iface, err := construct(factory)
		if err != nil {
			cancel()
			_ = g.Wait()
			return fmt.Errorf("starting controller %s: %w", name, err)
		}
		g.Go(func() error { return iface.Run(cfg.NumberOfConcurrentWorkers, rootCtx) })
	}
	cctx.SharedInformerFactory.Start(rootCtx.Done())
	cctx.KubeSharedInformerFactory.Start(rootCtx.Done())
	cctx.HTTP01ResourceMetadataInformersFactory.Start(rootCtx.Done())

	err = g.Wait()
	cctx.HTTP01ResourceMetadataInformersFactory.Shutdown()
	cctx.KubeSharedInformerFactory.Shutdown()
	cctx.SharedInformerFactory.Shutdown()
	return err
}

// defaultConfig is the configuration upstream's controller starts from before flags are applied.
func defaultConfig() (*config.ControllerConfiguration, error) {
	scheme, _, err := configscheme.NewSchemeAndCodecs()
	if err != nil {
		return nil, err
	}
	versioned := &configv1alpha1.ControllerConfiguration{}
	scheme.Default(versioned)
	cfg := &config.ControllerConfiguration{}
	if err := scheme.Convert(versioned, cfg, nil); err != nil {
		return nil, err
	}
	return cfg, nil
}

func contextFactory(ctx context.Context, cfg *config.ControllerConfiguration) (*controller.ContextFactory, error) {
	quantity := func(s string) resource.Quantity { return resource.MustParse(s) }
	return controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         cfg.KubeConfig,
		KubernetesAPIQPS:   cfg.KubernetesAPIQPS,
		KubernetesAPIBurst: cfg.KubernetesAPIBurst,
		Namespace:          cfg.Namespace,
		ACMEOptions: controller.ACMEOptions{
			HTTP01SolverResourceRequestCPU:    quantity(cfg.ACMEHTTP01Config.SolverResourceRequestCPU),
			HTTP01SolverResourceRequestMemory: quantity(cfg.ACMEHTTP01Config.SolverResourceRequestMemory),
			HTTP01SolverResourceLimitsCPU:     quantity(cfg.ACMEHTTP01Config.SolverResourceLimitsCPU),
			HTTP01SolverResourceLimitsMemory:  quantity(cfg.ACMEHTTP01Config.SolverResourceLimitsMemory),
			ACMEHTTP01SolverRunAsNonRoot:      cfg.ACMEHTTP01Config.SolverRunAsNonRoot,
			HTTP01SolverImage:                 cfg.ACMEHTTP01Config.SolverImage,
			DNS01CheckRetryPeriod:             cfg.ACMEDNS01Config.CheckRetryPeriod,
			DNS01CheckAuthoritative:           !cfg.ACMEDNS01Config.RecursiveNameserversOnly,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: cfg.MaxConcurrentChallenges},
		IssuerOptions: controller.IssuerOptions{
			ClusterIssuerAmbientCredentials: cfg.ClusterIssuerAmbientCredentials,
			IssuerAmbientCredentials:        cfg.IssuerAmbientCredentials,
			ClusterResourceNamespace:        cfg.ClusterResourceNamespace,
		},
		IngressShimOptions: controller.IngressShimOptions{
			DefaultIssuerKind:                 cfg.IngressShimConfig.DefaultIssuerKind,
			DefaultIssuerGroup:                cfg.IngressShimConfig.DefaultIssuerGroup,
			DefaultAutoCertificateAnnotations: cfg.IngressShimConfig.DefaultAutoCertificateAnnotations,
		},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           cfg.EnableCertificateOwnerRef,
			CopiedAnnotationPrefixes:                 cfg.CopiedAnnotationPrefixes,
			CertificateRequestMinimumBackoffDuration: cfg.CertificateRequestMinimumBackoffDuration,
		},
	})
}
